import { createExecutionContext, env, SELF, waitOnExecutionContext } from 'cloudflare:test';
import {
  CONSENT_STATUSES,
  type ConsentStatus,
  INTENDED_USES,
  type IntendedUse,
  LICENSE_STATES,
  type LicenseState,
  type SyncUpdate,
  sha256Hex,
  type VoiceIndexRecord,
} from '@vip/shared-schema';
import fc from 'fast-check';
import { createLocalJWKSet, type JWTPayload, jwtVerify } from 'jose';
import { expect } from 'vitest';
import { createApp } from '../../src/app.js';
import { expectApproved } from './approved.js';
import { findAuditRecord } from './audit.js';
import { accessTokenFor, EDGE, GATE_PATH, jsonPost, newId, nextVersion, REDEEM_PATH, sync, uniqueIp } from './edge.js';

/*
 * Property tests of the gate's outcome rules (docs/CONTRACT.md#states-and-gate-rules) against a reference model written from
 * the spec text, not from src/gate/rules.ts. The project's answers to what the spec leaves open
 * (edge-gate/README.md, origin/src/licenses) are written into the model where they apply:
 * platform names are compared exactly, a licence counts while its expiry lies strictly in the
 * future, and a `license_token`, when given, names the one licence the call may rely on.
 */

// ---------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------

const MINUTE = 60_000;
const DAY = 86_400_000;

export interface ModelLicence {
  platform_name: string;
  scopes: readonly IntendedUse[];
  expires_at_ms: number;
  status: LicenseState;
  /** The plaintext licence token the owner handed the platform (the edge only sees its hash). */
  token: string;
}

/** One voice as the origin knows it; `null` is a voice with no registry record. */
export interface ModelVoice {
  consent: ConsentStatus;
  licences: readonly ModelLicence[];
}

export interface ModelCall {
  platform_name: string;
  intended_use: IntendedUse;
  license_token: string | null;
}

export type Expected =
  | { outcome: 'no_registry_record'; decision: 'unresolved'; reason: null; consent_status: 'unknown'; license_status: 'not_applicable' }
  | {
      outcome: 'blocked';
      decision: 'deny';
      reason: 'no_consent' | 'no_license' | 'scope_mismatch';
      consent_status: ConsentStatus;
      license_status: 'licensed' | 'unlicensed';
    }
  | { outcome: 'approved'; decision: 'allow'; reason: null; consent_status: 'active'; license_status: 'licensed' };

/**
 * docs/CONTRACT.md#states-and-gate-rules, rules 1 to 3, for one call at instant `nowMs`:
 * 1. no registry record → no_registry_record;
 * 2. consent missing → no_consent; else no licence → no_license; else scope does not fit → scope_mismatch;
 * 3. otherwise approved.
 * `license_status` (docs/CONTRACT.md#gate-results, Variant A audit) says whether a licence the caller holds covers the use,
 * whatever else blocked the call.
 */
export function referenceOutcome(voice: ModelVoice | null, call: ModelCall, nowMs: number): Expected {
  if (voice === null) {
    return {
      outcome: 'no_registry_record',
      decision: 'unresolved',
      reason: null,
      consent_status: 'unknown',
      license_status: 'not_applicable',
    };
  }
  const held: ModelLicence[] = [];
  for (const licence of voice.licences) {
    const forThisPlatform = licence.platform_name === call.platform_name;
    const inForce = licence.status === 'active' && nowMs < licence.expires_at_ms;
    const named = call.license_token === null || call.license_token === licence.token;
    if (forThisPlatform && inForce && named) held.push(licence);
  }
  let covered = false;
  for (const licence of held) if (licence.scopes.includes(call.intended_use)) covered = true;
  const license_status = covered ? 'licensed' : 'unlicensed';
  const blocked = (reason: 'no_consent' | 'no_license' | 'scope_mismatch'): Expected => ({
    outcome: 'blocked',
    decision: 'deny',
    reason,
    consent_status: voice.consent,
    license_status,
  });
  if (voice.consent !== 'active') return blocked('no_consent');
  if (held.length === 0) return blocked('no_license');
  if (!covered) return blocked('scope_mismatch');
  return { outcome: 'approved', decision: 'allow', reason: null, consent_status: 'active', license_status: 'licensed' };
}

/** docs/CONTRACT.md#versioning: Variant A keeps `approval_token` "until" its sunset date, that day included (UTC). */
export const aliasGoneFrom = (sunsetDate: string) => Date.parse(`${sunsetDate}T00:00:00.000Z`) + DAY;
export const ALIAS_GONE_FROM_MS = aliasGoneFrom('2026-09-17');

// ---------------------------------------------------------------------------------------------
// Random states
// ---------------------------------------------------------------------------------------------

/** Whose licence: the caller's exact name, a case variant of it, or another platform's. */
export type PlatformPick = 'caller' | 'upper' | 'lower' | 'swapped' | 'other';
export type ExpiryPick = { kind: 'offset'; ms: number };
export interface LicenceSpec {
  platform: PlatformPick;
  scopes: IntendedUse[];
  expiry: ExpiryPick;
  status: LicenseState;
}
export type TokenPick =
  | { kind: 'none' }
  | { kind: 'own'; index: number }
  | { kind: 'other_voice' }
  | { kind: 'expired' }
  | { kind: 'garbage'; text: string };
export interface VoiceSpec {
  consent: ConsentStatus;
  licences: LicenceSpec[];
}
export interface Scenario {
  presence: 'published' | 'never_published' | 'deleted';
  voice: VoiceSpec;
  token: TokenPick;
  use: IntendedUse;
  /** Order of the licences in the published record. */
  order: number[];
  /** An older (or equal) version of another state, published after the real one. */
  stale: { versionsBack: number; voice: VoiceSpec } | null;
  caller: 'api_key' | 'bearer' | 'anonymous';
}

const platformPick = fc.oneof(
  { arbitrary: fc.constant<PlatformPick>('caller'), weight: 5 },
  { arbitrary: fc.constantFrom<PlatformPick>('upper', 'lower', 'swapped', 'other'), weight: 3 },
);

/**
 * Expiry offsets from the instant of the call. Over SELF.fetch the clock runs on, so offsets keep
 * a wide margin either side; with a pinned clock they include the exact instant and ±1 ms.
 */
export const realClockExpiry = fc.oneof(
  { arbitrary: fc.integer({ min: 10 * MINUTE, max: 30 * DAY }), weight: 3 },
  { arbitrary: fc.integer({ min: -30 * DAY, max: -MINUTE }), weight: 1 },
);
export const pinnedClockExpiry = fc.oneof(
  { arbitrary: fc.constantFrom(-1, 0, 1), weight: 2 },
  { arbitrary: fc.integer({ min: -2000, max: 2000 }), weight: 1 },
  realClockExpiry,
);

const licenceSpec = (expiry: fc.Arbitrary<number>) =>
  fc.record({
    platform: platformPick,
    scopes: fc.subarray([...INTENDED_USES]),
    expiry: expiry.map((ms): ExpiryPick => ({ kind: 'offset', ms })),
    status: fc.oneof(
      { arbitrary: fc.constant<LicenseState>('active'), weight: 4 },
      { arbitrary: fc.constantFrom(...LICENSE_STATES), weight: 1 },
    ),
  });

export const voiceSpec = (expiry: fc.Arbitrary<number>, maxLicences = 4) =>
  fc.record({
    consent: fc.oneof(
      { arbitrary: fc.constant<ConsentStatus>('active'), weight: 3 },
      { arbitrary: fc.constantFrom(...CONSENT_STATUSES), weight: 1 },
    ),
    licences: fc.array(licenceSpec(expiry), { maxLength: maxLicences }),
  });

export const tokenPick: fc.Arbitrary<TokenPick> = fc.oneof(
  { arbitrary: fc.constant<TokenPick>({ kind: 'none' }), weight: 3 },
  { arbitrary: fc.nat({ max: 7 }).map((index): TokenPick => ({ kind: 'own', index })), weight: 3 },
  { arbitrary: fc.constant<TokenPick>({ kind: 'other_voice' }), weight: 1 },
  { arbitrary: fc.constant<TokenPick>({ kind: 'expired' }), weight: 1 },
  { arbitrary: fc.string({ minLength: 1, maxLength: 60 }).map((text): TokenPick => ({ kind: 'garbage', text })), weight: 1 },
);

export function scenario(options: { callers: Scenario['caller'][]; expiry: fc.Arbitrary<number> }): fc.Arbitrary<Scenario> {
  return fc
    .record({
      presence: fc.oneof(
        { arbitrary: fc.constant<Scenario['presence']>('published'), weight: 8 },
        { arbitrary: fc.constantFrom<Scenario['presence']>('never_published', 'deleted'), weight: 2 },
      ),
      voice: voiceSpec(options.expiry),
      token: tokenPick,
      use: fc.constantFrom(...INTENDED_USES),
      stale: fc.option(fc.record({ versionsBack: fc.nat({ max: 3 }), voice: voiceSpec(options.expiry) }), { freq: 2 }),
      caller: fc.constantFrom(...options.callers),
    })
    .chain((drawn) => {
      const indices = drawn.voice.licences.map((_, index) => index);
      return fc
        .shuffledSubarray(indices, { minLength: indices.length, maxLength: indices.length })
        .map((order): Scenario => ({ ...drawn, order }));
    });
}

// ---------------------------------------------------------------------------------------------
// Realising a scenario: platform names, licence tokens, what the origin publishes
// ---------------------------------------------------------------------------------------------

const swapCase = (text: string) => [...text].map((ch) => (ch === ch.toUpperCase() ? ch.toLowerCase() : ch.toUpperCase())).join('');

/** A platform name with letters of both cases, so each case variant is a different name. */
export const newCallerPlatform = () => `Prop Voice ${crypto.randomUUID().slice(0, 8)}`;

export function platformFor(pick: PlatformPick, caller: string): string {
  switch (pick) {
    case 'caller':
      return caller;
    case 'upper':
      return caller.toUpperCase();
    case 'lower':
      return caller.toLowerCase();
    case 'swapped':
      return swapCase(caller);
    case 'other':
      return `Other Voice ${crypto.randomUUID().slice(0, 8)}`;
  }
}

export const realise = (spec: VoiceSpec, callerPlatform: string, nowMs: number): ModelVoice => ({
  consent: spec.consent,
  licences: spec.licences.map((licence) => ({
    platform_name: platformFor(licence.platform, callerPlatform),
    scopes: licence.scopes,
    expires_at_ms: nowMs + licence.expiry.ms,
    status: licence.status,
    token: `lic_${crypto.randomUUID()}`,
  })),
});

/** The edge index record the origin publishes for a model voice (licence tokens only as hashes). */
export async function indexRecord(voiceId: string, voice: ModelVoice, order?: readonly number[]): Promise<VoiceIndexRecord> {
  const ordered = order ? order.map((index) => voice.licences[index]!) : voice.licences;
  return {
    voice_id: voiceId,
    owner_id: newId(),
    consent_status: voice.consent,
    licenses: await Promise.all(
      ordered.map(async (licence) => ({
        license_id: newId(),
        platform_name: licence.platform_name,
        scopes: [...licence.scopes],
        expires_at: new Date(licence.expires_at_ms).toISOString(),
        status: licence.status,
        token_hash: await sha256Hex(licence.token),
      })),
    ),
  };
}

export const voiceUpdate = (voiceId: string, version: number, record: VoiceIndexRecord | null): SyncUpdate => ({
  kind: 'voice',
  voice_id: voiceId,
  version,
  record,
});

// ---------------------------------------------------------------------------------------------
// Calling the gate
// ---------------------------------------------------------------------------------------------

export type Fetcher = (path: string, init: RequestInit) => Promise<Response>;

export const viaSelf: Fetcher = (path, init) => SELF.fetch(`${EDGE}${path}`, init);

/**
 * The Worker's own app and bindings (plus `settings`) with a clock the test sets, so a licence can
 * expire at the very instant of the call (SELF cannot pin the clock). VoiceGate judges on the
 * instant the route hands it, so the whole decision happens at `clock.nowMs`. Keep the clock at or
 * after the real one: VoiceGate's purge alarm runs on the real clock and would drop the token of a
 * decision pinned in the past before it could be redeemed.
 */
export function pinnedClockFetcher(settings: Record<string, string> = {}): { fetch: Fetcher; clock: { nowMs: number } } {
  const clock = { nowMs: Date.now() };
  const app = createApp({ now: () => clock.nowMs, newId: () => crypto.randomUUID() });
  const deployedEnv = { ...env, ...settings };
  return {
    clock,
    fetch: async (path, init) => {
      const ctx = createExecutionContext();
      const response = await app.fetch(new Request(`${EDGE}${path}`, init), deployedEnv, ctx);
      await waitOnExecutionContext(ctx);
      return response;
    },
  };
}

export interface Caller {
  platform: string;
  headers: Record<string, string>;
}

/**
 * A caller of its own per run, so no limit of one run touches another. An API key comes with the
 * index update that publishes it, for the run to send in its one sync batch.
 */
export async function newCaller(kind: Scenario['caller']): Promise<{ caller: Caller; updates: SyncUpdate[] }> {
  const platform = newCallerPlatform();
  if (kind === 'bearer')
    return { caller: { platform, headers: { authorization: `Bearer ${await accessTokenFor({ role: 'admin' })}` } }, updates: [] };
  if (kind === 'anonymous') return { caller: { platform, headers: { 'cf-connecting-ip': uniqueIp() } }, updates: [] };
  const apiKey = `vip_${crypto.randomUUID().replaceAll('-', '')}`;
  const record = { key_id: newId(), platform_id: newId(), platform_name: platform, revoked: false };
  return {
    caller: { platform, headers: { 'x-api-key': apiKey } },
    updates: [{ kind: 'api_key', key_hash: await sha256Hex(apiKey), version: nextVersion(), record }],
  };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let jwks: ReturnType<typeof createLocalJWKSet> | undefined;
async function edgeJwks() {
  if (!jwks) {
    const response = await SELF.fetch(`${EDGE}/.well-known/jwks.json`);
    jwks = createLocalJWKSet((await response.json()) as { keys: JsonWebKey[] } as never);
  }
  return jwks;
}

/** What one gate answer says, reduced to what the model predicts (tokens and check_ids vary). */
export interface Observed {
  outcome: Expected['outcome'];
  reason: unknown;
  decision: unknown;
  consent_status: unknown;
  license_status: unknown;
}

export interface CallContext {
  variant: 'A' | 'B';
  fetch: Fetcher;
  caller: Caller;
  voiceId: string;
  call: ModelCall;
  /** The instant the gate judges at: pinned, or read just before the call. */
  nowMs: number;
  /** Variant A: the first instant without the approval_token alias. */
  aliasGoneFromMs: number;
}

/**
 * Calls the gate and checks the answer against `expected`: the HTTP 200 body of docs/CONTRACT.md#gate-results in the
 * deployed variant, the audit record of the decision (docs/CONTRACT.md#states-and-gate-rules rule 4), and for an approval a token
 * that verifies with the edge's JWKS and redeems exactly once.
 */
export async function callAndCheck(ctx: CallContext, expected: Expected): Promise<Observed> {
  const request = {
    voice_id: ctx.voiceId,
    platform_name: ctx.call.platform_name,
    intended_use: ctx.call.intended_use,
    ...(ctx.call.license_token === null ? {} : { license_token: ctx.call.license_token }),
  };
  const response = await ctx.fetch(GATE_PATH, jsonPost(request, ctx.caller.headers));
  expect(response.status).toBe(200);
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.check_id).toMatch(UUID);
  const checkId = body.check_id as string;

  const aliasExpected = ctx.variant === 'A' && expected.outcome === 'approved' && ctx.nowMs < ctx.aliasGoneFromMs;
  let tokenJti: string | null = null;
  if (expected.outcome === 'no_registry_record') {
    expect(body).toEqual({ action: 'no_registry_record', platform_decision_required: true, voice_id: null, check_id: checkId });
  } else if (expected.outcome === 'blocked') {
    expect(body).toEqual({
      status: 'blocked',
      action: 'authorization_denied',
      reason: expected.reason,
      voice_id: ctx.voiceId,
      license_url: expect.any(String),
      check_id: checkId,
      authorization_denied: true,
    });
    const licenseUrl = new URL(body.license_url as string);
    expect(`${licenseUrl.origin}${licenseUrl.pathname}`).toBe(env.LICENSING_URL);
    expect(licenseUrl.searchParams.get('voice_id')).toBe(ctx.voiceId);
  } else {
    const token = expectApproved(body, { variant: ctx.variant, voiceId: ctx.voiceId, alias: aliasExpected, checkId });
    tokenJti = await checkTokenRedeemsOnce(ctx, token, body);
  }
  // The deprecation headers go with the alias and with nothing else.
  expect(response.headers.get('deprecation') !== null).toBe(aliasExpected);

  const audit = await findAuditRecord(checkId);
  expect(audit).toMatchObject({
    check_id: checkId,
    kind: 'gate.decision',
    voice_id: ctx.voiceId,
    platform_name: ctx.call.platform_name,
    intended_use: ctx.call.intended_use,
    decision: expected.decision,
    reason: expected.reason,
    consent_status: expected.consent_status,
    license_status: expected.license_status,
    token_jti: tokenJti,
  });
  return {
    outcome: expected.outcome,
    reason: audit?.reason,
    decision: audit?.decision,
    consent_status: audit?.consent_status,
    license_status: audit?.license_status,
  };
}

async function checkTokenRedeemsOnce(ctx: CallContext, token: string, body: Record<string, unknown>): Promise<string> {
  const { payload, protectedHeader } = await jwtVerify(token, await edgeJwks(), {
    issuer: 'urn:vip:edge',
    typ: 'vip-authz+jwt',
    currentDate: new Date(ctx.nowMs),
  });
  expect(protectedHeader.alg).toBe('EdDSA');
  const claims = payload as JWTPayload & Record<string, unknown>;
  expect(claims).toMatchObject({
    voice_id: ctx.voiceId,
    platform: ctx.call.platform_name,
    intended_use: ctx.call.intended_use,
    check_id: body.check_id,
  });
  expect(new Date((claims.exp as number) * 1000).toISOString()).toBe(body.expires_at);
  expect(claims.exp as number).toBeGreaterThan(Math.floor(ctx.nowMs / 1000) - 1);

  const redeem = () => ctx.fetch(REDEEM_PATH, jsonPost({ token }, ctx.caller.headers));
  const first = await redeem();
  expect(first.status).toBe(200);
  expect(await first.json()).toMatchObject({ voice_id: ctx.voiceId, check_id: body.check_id, jti: claims.jti });
  const second = await redeem();
  expect(second.status).toBe(409);
  expect(await second.json()).toMatchObject({ code: 'token_already_used' });
  return claims.jti as string;
}

// ---------------------------------------------------------------------------------------------
// One scenario, end to end
// ---------------------------------------------------------------------------------------------

/** The licence token a scenario sends; a licence it adds to the voice goes to `extra`, another voice to `updates`. */
async function chooseToken(
  pick: TokenPick,
  voice: ModelVoice,
  extra: ModelLicence[],
  updates: SyncUpdate[],
  callerPlatform: string,
  nowMs: number,
): Promise<string | null> {
  switch (pick.kind) {
    case 'none':
      return null;
    case 'own':
      return voice.licences.length === 0 ? null : voice.licences[pick.index % voice.licences.length]!.token;
    case 'garbage':
      return pick.text;
    case 'expired': {
      // A licence of this voice for the caller, covering every use, that ran out a day ago.
      const expired: ModelLicence = {
        platform_name: callerPlatform,
        scopes: [...INTENDED_USES],
        expires_at_ms: nowMs - DAY,
        status: 'active',
        token: `lic_${crypto.randomUUID()}`,
      };
      extra.push(expired);
      return expired.token;
    }
    case 'other_voice': {
      // Another voice's live licence for this caller, covering every use.
      const token = `lic_${crypto.randomUUID()}`;
      const other: ModelVoice = {
        consent: 'active',
        licences: [{ platform_name: callerPlatform, scopes: [...INTENDED_USES], expires_at_ms: nowMs + DAY, status: 'active', token }],
      };
      const otherId = newId();
      updates.push(voiceUpdate(otherId, nextVersion(), await indexRecord(otherId, other)));
      return token;
    }
  }
}

export interface ScenarioOptions {
  variant: 'A' | 'B';
  fetch: Fetcher;
  /** Pinned instant of the call; undefined: the real clock. */
  pinnedNowMs?: number;
  /** The deployment's first instant without the alias; the spec's date unless a setting moved it. */
  aliasGoneFromMs?: number;
}

const callOptions = (options: ScenarioOptions) => ({
  variant: options.variant,
  fetch: options.fetch,
  aliasGoneFromMs: options.aliasGoneFromMs ?? ALIAS_GONE_FROM_MS,
});

/**
 * Publishes the scenario's state through the internal sync route (one signed batch: the caller's
 * key, any other voice, the voice and its deletion), calls the gate, compares with the model; then,
 * when the scenario has one, publishes a stale update and checks that the answer has not changed.
 */
export async function runScenario(s: Scenario, options: ScenarioOptions): Promise<void> {
  const startMs = options.pinnedNowMs ?? Date.now();
  const { caller, updates } = await newCaller(s.caller);
  const voiceId = newId();
  const drawn = realise(s.voice, caller.platform, startMs);
  const extra: ModelLicence[] = [];
  const licenceToken = await chooseToken(s.token, drawn, extra, updates, caller.platform, startMs);
  const voice: ModelVoice = { consent: drawn.consent, licences: [...drawn.licences, ...extra] };
  const order = [...s.order, ...extra.map((_, index) => drawn.licences.length + index)];

  let model: ModelVoice | null = null;
  let version: number | null = null;
  if (s.presence !== 'never_published') {
    version = nextVersion();
    updates.push(voiceUpdate(voiceId, version, await indexRecord(voiceId, voice, order)));
    model = voice;
    if (s.presence === 'deleted') {
      // In the same batch: whichever of the two lands first, the newer version (the deletion) wins.
      version = nextVersion();
      updates.push(voiceUpdate(voiceId, version, null));
      model = null;
    }
  }
  if (updates.length > 0) expect((await sync(updates)).applied).toBeGreaterThanOrEqual(updates.length - 1);

  const call: ModelCall = { platform_name: caller.platform, intended_use: s.use, license_token: licenceToken };
  const ask = async () => {
    const nowMs = options.pinnedNowMs ?? Date.now();
    const expected = referenceOutcome(model, call, nowMs);
    return callAndCheck({ ...callOptions(options), caller, voiceId, call, nowMs }, expected);
  };
  const before = await ask();

  if (s.stale && version !== null) {
    const staleVoice = realise(s.stale.voice, caller.platform, startMs);
    const ack = await sync([voiceUpdate(voiceId, version - s.stale.versionsBack, await indexRecord(voiceId, staleVoice))]);
    expect(ack).toEqual({ applied: 0, stale: 1 });
    expect(await ask()).toEqual(before);
  }
}

/**
 * Several independent scenarios at once (own callers, voices and keys each): the gate's storage
 * calls wait on commits, so a few in flight use the machine better than one after another. A
 * failing batch shrinks to the one scenario that fails.
 */
export const batchOf = <T>(arbitrary: fc.Arbitrary<T>) => fc.array(arbitrary, { minLength: 1, maxLength: 4 });
export async function runBatch<T>(items: T[], run: (item: T) => Promise<void>): Promise<void> {
  // Every scenario settles before the property moves on, so none outlives its run.
  const failed = (await Promise.allSettled(items.map(run))).find((outcome) => outcome.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * The same state published to two voices, licence by licence in two different orders (one version
 * per licence added, as an origin granting them one after another would), gets the same answer.
 */
export async function runOrderScenario(
  s: { voice: VoiceSpec; use: IntendedUse; token: TokenPick; orders: [number[], number[]]; caller: Scenario['caller'] },
  options: ScenarioOptions,
): Promise<void> {
  const startMs = options.pinnedNowMs ?? Date.now();
  const { caller, updates } = await newCaller(s.caller);
  const drawn = realise(s.voice, caller.platform, startMs);
  const extra: ModelLicence[] = [];
  const licenceToken = await chooseToken(s.token, drawn, extra, updates, caller.platform, startMs);
  const voice: ModelVoice = { consent: drawn.consent, licences: [...drawn.licences, ...extra] };
  const call: ModelCall = { platform_name: caller.platform, intended_use: s.use, license_token: licenceToken };
  const twins = s.orders.map((order) => ({
    voiceId: newId(),
    order: [...order, ...extra.map((_, index) => drawn.licences.length + index)],
  }));

  // Batch k holds both twins' k-th version: the first k licences of each one's order.
  for (let count = 0; count <= voice.licences.length; count++) {
    for (const twin of twins) {
      const partial: ModelVoice = { consent: voice.consent, licences: twin.order.slice(0, count).map((index) => voice.licences[index]!) };
      updates.push(voiceUpdate(twin.voiceId, nextVersion(), await indexRecord(twin.voiceId, partial)));
    }
    expect(await sync(updates.splice(0))).toMatchObject({ stale: 0 });
  }

  const answers: Observed[] = [];
  for (const twin of twins) {
    const nowMs = options.pinnedNowMs ?? Date.now();
    const expected = referenceOutcome(voice, call, nowMs);
    answers.push(await callAndCheck({ ...callOptions(options), caller, voiceId: twin.voiceId, call, nowMs }, expected));
  }
  expect(answers[1]).toEqual(answers[0]);
}

export const orderScenario = (callers: Scenario['caller'][]) =>
  fc
    .record({
      // One sync per licence added: three keep a run short.
      voice: voiceSpec(realClockExpiry, 3),
      use: fc.constantFrom(...INTENDED_USES),
      token: tokenPick,
      caller: fc.constantFrom(...callers),
    })
    .chain((drawn) => {
      const indices = drawn.voice.licences.map((_, index) => index);
      const permutation = fc.shuffledSubarray(indices, { minLength: indices.length, maxLength: indices.length });
      return fc.tuple(permutation, permutation).map(([first, second]) => ({ ...drawn, orders: [first, second] as [number[], number[]] }));
    });

/**
 * fast-check settings: VITE_FC_SEED (and VITE_FC_PATH) replay a failing run (fast-check prints
 * both on failure), VITE_FC_RUNS changes the number of runs. Tests in workerd have no process.env;
 * Vite hands VITE_-prefixed variables to import.meta.env.
 */
export function fcSettings(numRuns: number): fc.Parameters<unknown> {
  const vars = (import.meta as unknown as { env?: Record<string, string | undefined> }).env ?? {};
  const seed = vars.VITE_FC_SEED === undefined ? undefined : Number(vars.VITE_FC_SEED);
  const runs = vars.VITE_FC_RUNS === undefined ? numRuns : Number(vars.VITE_FC_RUNS);
  return { numRuns: runs, ...(seed === undefined ? {} : { seed }), ...(vars.VITE_FC_PATH ? { path: vars.VITE_FC_PATH } : {}) };
}
