import { createExecutionContext, env, SELF, waitOnExecutionContext } from 'cloudflare:test';
import {
  accessToken,
  INTERNAL_SYNC_PATH,
  type IntendedUse,
  type SyncUpdate,
  sha256Hex,
  signInternalRequest,
  type VoiceIndexRecord,
  type VoiceLicenseIndex,
} from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';
import { expect, vi } from 'vitest';
import { createApp } from '../../src/app.js';
import { systemRuntime } from '../../src/runtime.js';

/** Storage is shared by every test of a run, so each test makes its own ids, names and versions. */
export const newId = () => crypto.randomUUID();
export const uniqueName = (prefix: string) => `${prefix} ${crypto.randomUUID().slice(0, 8)}`;
/** A client address of its own, so per-IP limits of one test never touch another's. */
export const uniqueIp = () => `2001:db8::${crypto.randomUUID().slice(0, 4)}:${crypto.randomUUID().slice(0, 4)}`;
let versionCounter = Date.now();
export const nextVersion = () => ++versionCounter;

export const EDGE = 'https://edge.test';
export const GATE_PATH = edgeRoutes.preSynthesisCheck.path;
export const REDEEM_PATH = edgeRoutes.redeem.path;

export async function signedPost(path: string, body: string, options: { secret?: string; atSeconds?: number } = {}) {
  const headers = await signInternalRequest(
    options.secret ?? (env.INTERNAL_SECRET as string),
    'POST',
    path,
    body,
    options.atSeconds ?? Math.floor(Date.now() / 1000),
  );
  return SELF.fetch(`${EDGE}${path}`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
}

export async function sync(updates: SyncUpdate[]) {
  const response = await signedPost(INTERNAL_SYNC_PATH, JSON.stringify({ updates }));
  expect(response.status).toBe(200);
  return (await response.json()) as { applied: number; stale: number };
}

export interface PlatformKey {
  apiKey: string;
  keyHash: string;
  keyId: string;
  platformId: string;
  platformName: string;
}

export async function newPlatformKey(platformName = uniqueName('Platform')): Promise<PlatformKey> {
  const apiKey = `vip_${crypto.randomUUID().replaceAll('-', '')}`;
  const key: PlatformKey = { apiKey, keyHash: await sha256Hex(apiKey), keyId: newId(), platformId: newId(), platformName };
  await sync([{ kind: 'api_key', key_hash: key.keyHash, version: nextVersion(), record: keyRecord(key, false) }]);
  return key;
}

export const keyRecord = (key: PlatformKey, revoked: boolean) => ({
  key_id: key.keyId,
  platform_id: key.platformId,
  platform_name: key.platformName,
  revoked,
});

export async function licence(
  platformName: string,
  scopes: IntendedUse[],
  overrides: Partial<VoiceLicenseIndex> & { token?: string } = {},
): Promise<VoiceLicenseIndex & { token: string }> {
  const token = overrides.token ?? `lic_${crypto.randomUUID()}`;
  const licenseId = newId();
  return {
    license_id: licenseId,
    platform_name: platformName,
    scopes,
    expires_at: new Date(Date.now() + 86_400_000).toISOString(),
    status: 'active',
    token_hash: await sha256Hex(token),
    // Stands for the origin's hash of the licence's canonical terms: the edge only carries it.
    terms_sha256: await sha256Hex(`terms of ${licenseId}`),
    ...overrides,
    token,
  };
}

export function voiceRecord(overrides: Partial<VoiceIndexRecord> = {}): VoiceIndexRecord {
  return { voice_id: newId(), owner_id: newId(), consent_status: 'active', licenses: [], ...overrides };
}

export async function publishVoice(record: VoiceIndexRecord, version = nextVersion()) {
  // The index holds licence hashes only; drop the plaintext tokens tests keep for themselves.
  const licenses = record.licenses.map(({ token: _token, ...rest }: VoiceLicenseIndex & { token?: string }) => rest);
  return sync([{ kind: 'voice', voice_id: record.voice_id, version, record: { ...record, licenses } }]);
}

export function gateCheck(body: unknown, headers: Record<string, string>) {
  return SELF.fetch(`${EDGE}${GATE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

export async function expectProblem(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toBe('application/problem+json');
  const problem = (await response.json()) as Record<string, unknown>;
  expect(problem).toMatchObject({ status, code, type: `urn:vip:problem:${code}` });
  expect(typeof problem.title).toBe('string');
  expect(typeof problem.detail).toBe('string');
  expect(problem.request_id).toBe(response.headers.get('x-request-id'));
  return problem;
}

/** The origin's signing key, served as its JWKS through a stub of the isolate's fetch. */
let originKeyPair: Promise<CryptoKeyPair> | undefined;
const originKeys = () => {
  originKeyPair ??= generateKeyPair('EdDSA', { extractable: true });
  return originKeyPair;
};
const ORIGIN_KID = 'origin-test-key';

export async function serveOriginJwks() {
  const publicJwk = { ...(await exportJWK((await originKeys()).publicKey)), kid: ORIGIN_KID, alg: 'EdDSA', use: 'sig' };
  const jwksUrl = `${env.ORIGIN_URL as string}/.well-known/jwks.json`;
  const realFetch = globalThis.fetch;
  return vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url === jwksUrl) return Response.json({ keys: [publicJwk] });
    return realFetch(input, init);
  });
}

export async function accessTokenFor(
  claims: JWTPayload = {},
  options: { key?: CryptoKey; kid?: string; typ?: string; expiresIn?: number } = {},
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ role: 'owner', ...claims })
    .setProtectedHeader({ alg: 'EdDSA', typ: options.typ ?? accessToken.type, kid: options.kid ?? ORIGIN_KID })
    .setSubject((claims.sub as string | undefined) ?? newId())
    .setIssuer(accessToken.issuer)
    .setAudience((claims.aud as string | undefined) ?? accessToken.audience)
    .setIssuedAt(now)
    .setExpirationTime(now + (options.expiresIn ?? 900))
    .setJti(newId())
    .sign(options.key ?? (await originKeys()).privateKey);
}

/**
 * The Worker's own fetch handler under other deployment settings (a later sunset, other limits; never the variant, which its own project deploys)
 * or a pinned clock: the same app and bindings SELF uses, built with those inputs.
 */
export async function edgeFetch(
  path: string,
  init: RequestInit,
  options: { settings?: Record<string, string>; nowMs?: number } = {},
): Promise<Response> {
  const { app, deployedEnv } = deployment(options);
  const ctx = createExecutionContext();
  const response = await app.fetch(new Request(`${EDGE}${path}`, init), deployedEnv, ctx);
  await waitOnExecutionContext(ctx);
  return response;
}

/** One app and env object per option set, so config and keys are parsed once, as in production. */
const deployments = new Map<string, { app: ReturnType<typeof createApp>; deployedEnv: typeof env }>();
function deployment(options: { settings?: Record<string, string>; nowMs?: number }) {
  const cacheKey = JSON.stringify(options);
  let found = deployments.get(cacheKey);
  if (!found) {
    const runtime = options.nowMs === undefined ? systemRuntime : { now: () => options.nowMs!, newId: () => crypto.randomUUID() };
    found = { app: createApp(runtime), deployedEnv: { ...env, ...options.settings } };
    deployments.set(cacheKey, found);
  }
  return found;
}

export const jsonPost = (body: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** A published voice with active consent and a licence for `platformName` covering `scopes`. */
export async function licensedVoice(platformName: string, scopes: IntendedUse[] = ['audiobook']) {
  const grant = await licence(platformName, scopes);
  const record = voiceRecord({ licenses: [grant] });
  await publishVoice(record);
  return { record, voiceId: record.voice_id, licenceToken: grant.token };
}

export function decodeJwtPart(part: string): Record<string, unknown> {
  return JSON.parse(atob(part.replaceAll('-', '+').replaceAll('_', '/'))) as Record<string, unknown>;
}

/** Sends `count` requests in batches of 50 (quick, yet the limiter sees every one) and returns their statuses. */
export async function burst(count: number, send: () => Promise<Response>): Promise<number[]> {
  const statuses: number[] = [];
  for (let sent = 0; sent < count; sent += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, count - sent) }, send));
    for (const response of batch) {
      statuses.push(response.status);
      await response.body?.cancel();
    }
  }
  return statuses;
}
