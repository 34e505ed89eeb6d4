import { env, SELF } from 'cloudflare:test';
import { kvKeys } from '@vip/shared-schema';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { expectApproved } from './testing/approved.js';
import { findAuditRecord } from './testing/audit.js';
import {
  EDGE,
  edgeFetch,
  expectProblem,
  GATE_PATH,
  gateCheck,
  jsonPost,
  licence,
  licensedVoice,
  newPlatformKey,
  nextVersion,
  publishVoice,
  sync,
  uniqueName,
  voiceRecord,
} from './testing/edge.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const licensingUrl = (voiceId: string) => `https://origin.test/licensing?voice_id=${voiceId}`;

async function check(key: { apiKey: string; platformName: string }, voiceId: string, extra: Record<string, unknown> = {}) {
  const response = await gateCheck(
    { voice_id: voiceId, platform_name: key.platformName, intended_use: 'audiobook', ...extra },
    { 'x-api-key': key.apiKey },
  );
  expect(response.status).toBe(200);
  return { response, body: (await response.json()) as Record<string, unknown> };
}

describe('pre-synthesis check, Variant A: approved (docs/CONTRACT.md#gate-results, rule 3)', () => {
  it('approves a consented, licensed voice with a single-use authorization token', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['audiobook', 'podcast']);
    const before = Date.now();
    const { body } = await check(key, voiceId);

    expectApproved(body, { variant: 'A', voiceId });
    const expiresAt = Date.parse(body.expires_at as string);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 + 300_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 300_000);

    const jwks = (await (await SELF.fetch(`${EDGE}/.well-known/jwks.json`)).json()) as { keys: JsonWebKey[] };
    const { payload, protectedHeader } = await jwtVerify(body.authorization_token as string, createLocalJWKSet(jwks as never));
    expect(protectedHeader).toMatchObject({ alg: 'EdDSA', typ: 'vip-authz+jwt' });
    expect(payload).toMatchObject({ voice_id: voiceId, platform: key.platformName, intended_use: 'audiobook', check_id: body.check_id });
    expect(payload.jti).toMatch(UUID);
    expect((payload.exp as number) * 1000).toBe(expiresAt);
    expect((payload.exp as number) - (payload.iat as number)).toBe(300);
  });

  it('drops the approval_token alias after its sunset (2026-09-17) by default', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName);
    const { response, body } = await check(key, voiceId);
    expect(body).not.toHaveProperty('approval_token');
    expect(response.headers.get('deprecation')).toBeNull();
  });

  it('approves with a licence token that belongs to a live licence of this voice and platform', async () => {
    const key = await newPlatformKey();
    const { voiceId, licenceToken } = await licensedVoice(key.platformName);
    expect((await check(key, voiceId, { license_token: licenceToken })).body.status).toBe('approved');
  });

  it('writes an allow decision to the home shard of its caller, with the token jti and the terms of the licence that backed it', async () => {
    const key = await newPlatformKey();
    const { voiceId, record: published } = await licensedVoice(key.platformName);
    const { body } = await check(key, voiceId);
    const record = await findAuditRecord(body.check_id as string);
    expect(record).toMatchObject({
      kind: 'gate.decision',
      voice_id: voiceId,
      platform_name: key.platformName,
      intended_use: 'audiobook',
      decision: 'allow',
      action: 'authorized',
      reason: null,
      license_status: 'licensed',
      consent_status: 'active',
      caller_type: 'api_key',
      caller_id: key.keyId,
      license_terms_sha256: published.licenses[0]!.terms_sha256,
    });
    expect(record?.token_jti).toMatch(UUID);
  });

  it('names the terms of the licence that covers the use, among the platform’s licences of the voice', async () => {
    const key = await newPlatformKey();
    const podcasts = await licence(key.platformName, ['podcast']);
    const audiobooks = await licence(key.platformName, ['audiobook']);
    const record = voiceRecord({ licenses: [podcasts, audiobooks] });
    await publishVoice(record);
    const { body } = await check(key, record.voice_id);
    expect((await findAuditRecord(body.check_id as string))?.license_terms_sha256).toBe(audiobooks.terms_sha256);
  });

  it('writes an approval without terms, and no hash, for a licence published before licences had terms', async () => {
    const key = await newPlatformKey();
    const { terms_sha256: _none, ...older } = await licence(key.platformName, ['audiobook']);
    const record = voiceRecord({ licenses: [older] });
    await publishVoice(record);
    const { body } = await check(key, record.voice_id);
    const logged = await findAuditRecord(body.check_id as string);
    expect(logged).toMatchObject({ decision: 'allow' });
    expect(logged).not.toHaveProperty('license_terms_sha256');
  });
});

describe('pre-synthesis check, Variant A: blocked (docs/CONTRACT.md#gate-results, rule 2)', () => {
  const blocked = (voiceId: string, reason: string, checkId: unknown) => ({
    status: 'blocked',
    action: 'authorization_denied',
    reason,
    voice_id: voiceId,
    license_url: licensingUrl(voiceId),
    check_id: checkId,
    authorization_denied: true,
  });

  it('puts the voice into a licensing page that has a query of its own, replacing a voice_id already there', async () => {
    const key = await newPlatformKey();
    const record = voiceRecord({ licenses: [] });
    await publishVoice(record);
    const response = await edgeFetch(
      GATE_PATH,
      jsonPost({ voice_id: record.voice_id, platform_name: key.platformName, intended_use: 'audiobook' }, { 'x-api-key': key.apiKey }),
      { settings: { LICENSING_URL: 'https://licences.test/buy?lang=en%20GB&voice_id=stale#terms' } },
    );
    const { license_url } = (await response.json()) as { license_url: string };
    expect(license_url).toBe(`https://licences.test/buy?lang=en+GB&voice_id=${record.voice_id}#terms`);
  });

  it('blocks with no_consent when consent was withdrawn', async () => {
    const key = await newPlatformKey();
    const record = voiceRecord({ consent_status: 'withdrawn', licenses: [await licence(key.platformName, ['audiobook'])] });
    await publishVoice(record);
    const { body } = await check(key, record.voice_id);
    expect(body).toEqual(blocked(record.voice_id, 'no_consent', body.check_id));
    expect(await findAuditRecord(body.check_id as string)).toMatchObject({
      decision: 'deny',
      action: 'authorization_denied',
      reason: 'no_consent',
      license_status: 'licensed',
      consent_status: 'withdrawn',
    });
    // A refusal rests on no licence: its entry names no terms.
    expect(await findAuditRecord(body.check_id as string)).not.toHaveProperty('license_terms_sha256');
  });

  it('blocks with no_consent while consent is still unknown (freshly enrolled)', async () => {
    const key = await newPlatformKey();
    const record = voiceRecord({ consent_status: 'unknown' });
    await publishVoice(record);
    expect((await check(key, record.voice_id)).body.reason).toBe('no_consent');
  });

  it('blocks with no_license when only other platforms hold a licence', async () => {
    const key = await newPlatformKey();
    const record = voiceRecord({ licenses: [await licence(uniqueName('Other'), ['audiobook'])] });
    await publishVoice(record);
    const { body } = await check(key, record.voice_id);
    expect(body).toEqual(blocked(record.voice_id, 'no_license', body.check_id));
    expect(await findAuditRecord(body.check_id as string)).toMatchObject({
      decision: 'deny',
      license_status: 'unlicensed',
      consent_status: 'active',
    });
  });

  it('blocks with no_license when this platform’s licence expired or was revoked', async () => {
    const key = await newPlatformKey();
    const expired = await licence(key.platformName, ['audiobook'], { expires_at: new Date(Date.now() - 1000).toISOString() });
    const revoked = await licence(key.platformName, ['audiobook'], { status: 'revoked' });
    const record = voiceRecord({ licenses: [expired, revoked] });
    await publishVoice(record);
    expect((await check(key, record.voice_id)).body.reason).toBe('no_license');
  });

  it('blocks with scope_mismatch when the licence does not cover the intended use', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast', 'gaming']);
    const { body } = await check(key, voiceId);
    expect(body).toEqual(blocked(voiceId, 'scope_mismatch', body.check_id));
  });

  it('blocks with no_license when the licence token given is not one of this platform’s live licences', async () => {
    const key = await newPlatformKey();
    const other = await licence(uniqueName('Other'), ['audiobook']);
    const mine = await licence(key.platformName, ['audiobook']);
    const record = voiceRecord({ licenses: [mine, other] });
    await publishVoice(record);
    expect((await check(key, record.voice_id, { license_token: other.token })).body.reason).toBe('no_license');
    expect((await check(key, record.voice_id, { license_token: 'lic_made_up' })).body.reason).toBe('no_license');
  });

  it('never approves from KV alone: a withdrawal that reached VoiceGate wins over a stale KV copy', async () => {
    const key = await newPlatformKey();
    const { record } = await licensedVoice(key.platformName);
    const staleCopy = await env.EDGE_INDEX.get(kvKeys.voice(record.voice_id));
    await publishVoice({ ...record, consent_status: 'withdrawn' });
    // KV lags behind in other locations: put the approved copy back to play that location.
    await env.EDGE_INDEX.put(kvKeys.voice(record.voice_id), staleCopy!);
    const { body } = await check(key, record.voice_id);
    expect(body).toMatchObject({ status: 'blocked', reason: 'no_consent' });
  });
});

describe('pre-synthesis check, Variant A: no registry record (docs/CONTRACT.md#gate-results, rule 1)', () => {
  it('answers an unknown voice with HTTP 200 and platform_decision_required', async () => {
    const key = await newPlatformKey();
    const { body } = await check(key, crypto.randomUUID());
    expect(body).toEqual({
      action: 'no_registry_record',
      platform_decision_required: true,
      voice_id: null,
      check_id: expect.stringMatching(UUID),
    });
    expect(await findAuditRecord(body.check_id as string)).toMatchObject({
      decision: 'unresolved',
      action: 'no_registry_record',
      license_status: 'not_applicable',
      consent_status: 'unknown',
    });
  });

  it('treats a deleted voice as unknown', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName);
    await sync([{ kind: 'voice', voice_id: voiceId, version: nextVersion(), record: null }]);
    expect((await check(key, voiceId)).body).toMatchObject({ action: 'no_registry_record', voice_id: null });
  });
});

describe('pre-synthesis check, Variant A: errors (docs/CONTRACT.md#errors)', () => {
  it('gives every decision its own check_id', async () => {
    const key = await newPlatformKey();
    const voiceId = crypto.randomUUID();
    const first = await check(key, voiceId);
    const second = await check(key, voiceId);
    expect(first.body.check_id).not.toBe(second.body.check_id);
  });

  it('answers 401 without credentials, 403 for another platform and 422 for a bad body', async () => {
    const key = await newPlatformKey();
    const body = { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'audiobook' };
    await expectProblem(await gateCheck(body, {}), 401, 'authentication_required');
    await expectProblem(await gateCheck({ ...body, platform_name: 'Not Mine' }, { 'x-api-key': key.apiKey }), 403, 'platform_mismatch');
    await expectProblem(await gateCheck({ ...body, intended_use: 'radio' }, { 'x-api-key': key.apiKey }), 422, 'validation_failed');
  });
});
