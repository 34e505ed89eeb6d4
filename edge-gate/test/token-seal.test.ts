import { env, runDurableObjectAlarm, runInDurableObject, SELF } from 'cloudflare:test';
import { importJWK, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { serialOf } from '../src/gate/token-serial.js';
import { platformDesk } from '../src/objects/platform-desk-client.js';
import { VoiceGate } from '../src/objects/voice-gate.js';
import {
  decodeJwtPart,
  EDGE,
  edgeFetch,
  expectProblem,
  GATE_PATH,
  jsonPost,
  licence,
  licensedVoice,
  newPlatformKey,
  nextVersion,
  type PlatformKey,
  publishVoice,
  REDEEM_PATH,
  sync,
  voiceRecord,
} from './testing/edge.js';

/**
 * A desk seals each token's `jti` instead of storing the token (docs/DECISIONS.md#approvals-a-seal-instead-of-a-row):
 * approvals write nothing at the desk, yet only tokens the desk issued are redeemed, once each, on
 * the licence they were bound to.
 */
const TWENTY_MINUTES_AGO = Date.now() - 20 * 60_000;

const redeem = (key: PlatformKey, token: string, nowMs?: number) =>
  nowMs === undefined
    ? SELF.fetch(`${EDGE}${REDEEM_PATH}`, jsonPost({ token }, { 'x-api-key': key.apiKey }))
    : edgeFetch(REDEEM_PATH, jsonPost({ token }, { 'x-api-key': key.apiKey }), { nowMs });

async function approve(key: PlatformKey, voiceId: string, extra: { license_token?: string; nowMs?: number } = {}): Promise<string> {
  const { nowMs, ...fields } = extra;
  const body = { voice_id: voiceId, platform_name: key.platformName, intended_use: 'podcast', ...fields };
  const answer = (await (await edgeFetch(GATE_PATH, jsonPost(body, { 'x-api-key': key.apiKey }), { nowMs })).json()) as {
    status: string;
    authorization_token: string;
  };
  expect(answer.status).toBe('approved');
  return answer.authorization_token;
}

/** A token with the Worker's own signature (as with a leaked signing key) over `claims`. */
async function signedLikeTheGate(claims: Record<string, unknown>, header: Record<string, unknown>): Promise<string> {
  const key = await importJWK(JSON.parse(env.AUTH_TOKEN_PRIVATE_JWK as string), 'EdDSA');
  return new SignJWT(claims).setProtectedHeader(header as { alg: string }).sign(key);
}

describe("a token's seal", () => {
  it('is a version 8 UUID naming a serial, and the token names who may redeem it', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast']);
    const claims = decodeJwtPart((await approve(key, voiceId)).split('.')[1]!);
    expect(claims.azp).toBe(`platform:${key.platformName}`);
    expect(serialOf(claims.jti as string)).toBe(0);
    expect(serialOf(decodeJwtPart((await approve(key, voiceId)).split('.')[1]!).jti as string)).toBe(1);
  });

  it('refuses a token the desk never sealed, even with the gate’s own signature', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast', 'audiobook']);
    const genuine = await approve(key, voiceId);
    const [header, payload] = genuine.split('.');
    const claims = decodeJwtPart(payload!);
    const headerClaims = decodeJwtPart(header!);
    const forgeries = [
      { ...claims, jti: crypto.randomUUID() },
      { ...claims, intended_use: 'audiobook' },
      { ...claims, exp: (claims.exp as number) + 3600 },
      { ...claims, azp: 'anonymous' },
    ];
    for (const forged of forgeries) {
      await expectProblem(await redeem(key, await signedLikeTheGate(forged, headerClaims)), 410, 'token_revoked');
    }
    expect((await redeem(key, genuine)).status).toBe(200);
  });

  it('binds a token to the licence its licence token named, or else to the one the decision used', async () => {
    const key = await newPlatformKey();
    const first = await licence(key.platformName, ['podcast']);
    const second = await licence(key.platformName, ['podcast']);
    const record = voiceRecord({ licenses: [first, second] });
    await publishVoice(record);
    const viaSecond = await approve(key, record.voice_id, { license_token: second.token });
    const unnamed = await approve(key, record.voice_id);

    await publishVoice({ ...record, licenses: [{ ...first, status: 'revoked' }, second] });
    await expectProblem(await redeem(key, unnamed), 410, 'token_revoked');
    expect((await redeem(key, viaSecond)).status).toBe(200);
  });

  it('refuses a token whose licence was revoked even when a new licence of the same scope replaced it', async () => {
    const key = await newPlatformKey();
    const revoked = await licence(key.platformName, ['podcast']);
    const record = voiceRecord({ licenses: [revoked] });
    await publishVoice(record);
    const unnamed = await approve(key, record.voice_id);
    const named = await approve(key, record.voice_id, { license_token: revoked.token });

    await publishVoice({ ...record, licenses: [] });
    await expectProblem(await redeem(key, unnamed), 410, 'token_revoked');
    const replacement = await licence(key.platformName, ['podcast']);
    await publishVoice({ ...record, licenses: [replacement] });
    await expectProblem(await redeem(key, unnamed), 410, 'token_revoked');
    await expectProblem(await redeem(key, named), 410, 'token_revoked');
    expect((await redeem(key, await approve(key, record.voice_id))).status).toBe(200);
  });

  it('refuses, for good, a token issued before a withdrawal: granting consent again does not revive it', async () => {
    const key = await newPlatformKey();
    const { record } = await licensedVoice(key.platformName, ['podcast']);
    const before = await approve(key, record.voice_id);

    await publishVoice({ ...record, consent_status: 'withdrawn' });
    await expectProblem(await redeem(key, before), 410, 'token_revoked');
    await publishVoice(record);
    await expectProblem(await redeem(key, before), 410, 'token_revoked');
    expect((await redeem(key, await approve(key, record.voice_id))).status).toBe(200);
  });

  it('refuses a token issued before a withdrawal that reaches the edge after the later re-grant', async () => {
    const key = await newPlatformKey();
    const { record } = await licensedVoice(key.platformName, ['podcast']);
    const before = await approve(key, record.voice_id);
    const withdrawal = nextVersion();

    expect(await publishVoice(record)).toEqual({ applied: 1, stale: 0 });
    expect(await publishVoice({ ...record, consent_status: 'withdrawn' }, withdrawal)).toEqual({ applied: 0, stale: 1 });
    await expectProblem(await redeem(key, before), 410, 'token_revoked');
  });

  it('refuses a token issued before the voice was erased, after a voice with the same id is enrolled again', async () => {
    const key = await newPlatformKey();
    const { record } = await licensedVoice(key.platformName, ['podcast']);
    const before = await approve(key, record.voice_id);

    await sync([{ kind: 'voice', voice_id: record.voice_id, version: nextVersion(), record: null }]);
    await publishVoice(record);
    await expectProblem(await redeem(key, before), 410, 'token_revoked');
    expect((await redeem(key, await approve(key, record.voice_id))).status).toBe(200);
  });

  it('writes nothing at the desk for an approval once its key and serial block exist, and one entry per redemption', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast']);
    await approve(key, voiceId);
    const writes: string[] = [];
    await runInDurableObject(platformDesk(env, voiceId, key.platformName), (_live: VoiceGate, state) => {
      const storage = state.storage;
      const put = storage.put.bind(storage) as (key: string, value: unknown) => Promise<void>;
      const remove = storage.delete.bind(storage) as (keys: string | string[]) => Promise<unknown>;
      storage.put = ((name: string, value: unknown) => {
        writes.push(`put ${name}`);
        return put(name, value);
      }) as typeof storage.put;
      storage.delete = ((names: string | string[]) => {
        writes.push(`delete ${names}`);
        return remove(names);
      }) as typeof storage.delete;
    });
    const tokens = [];
    for (let i = 0; i < 20; i++) tokens.push(await approve(key, voiceId));
    expect(writes).toEqual([]);
    expect((await redeem(key, tokens[0]!)).status).toBe(200);
    expect(writes).toEqual(['put redeemed:0']);
  });

  it('redeems many tokens of one block at once, each exactly once, and keeps every bit across a new instance', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast']);
    const tokens = await Promise.all(Array.from({ length: 40 }, () => approve(key, voiceId)));
    const answers = await Promise.all([...tokens, ...tokens].map((token) => redeem(key, token)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(40);
    expect(statuses.filter((status) => status === 409)).toHaveLength(40);
    const spent = await runInDurableObject(platformDesk(env, voiceId, key.platformName), (_live: VoiceGate, state) => {
      const fresh = new VoiceGate(state, env);
      return Promise.all(
        tokens.map((token) => fresh.redeem(decodeJwtPart(token.split('.')[1]!) as Parameters<VoiceGate['redeem']>[0], Date.now())),
      );
    });
    expect(spent).toEqual(tokens.map(() => 'already_used'));
  });

  it('judges a redemption on a withdrawal that lands while the redemption checks the seal', async () => {
    const key = await newPlatformKey();
    const { record } = await licensedVoice(key.platformName, ['podcast']);
    const token = await approve(key, record.voice_id);
    const claims = decodeJwtPart(token.split('.')[1]!) as Parameters<VoiceGate['redeem']>[0];
    const withdrawn = { version: Number.MAX_SAFE_INTEGER, record: { ...record, consent_status: 'withdrawn' as const } };
    const [outcome] = await runInDurableObject(platformDesk(env, record.voice_id, key.platformName), (gate: VoiceGate) =>
      Promise.all([gate.redeem(claims, Date.now()), gate.holdRecord(withdrawn)]),
    );
    expect(outcome).toBe('revoked');
  });

  it('judges an approval on a withdrawal that lands while its token is sealed and signed', async () => {
    const key = await newPlatformKey();
    const { record } = await licensedVoice(key.platformName, ['podcast']);
    await approve(key, record.voice_id);
    const withdrawn = { version: Number.MAX_SAFE_INTEGER, record: { ...record, consent_status: 'withdrawn' as const } };
    const question = {
      voice_id: record.voice_id,
      platform_name: key.platformName,
      intended_use: 'podcast' as const,
      license_token_hash: null,
      check_id: crypto.randomUUID(),
      holder: `platform:${key.platformName}`,
      now_ms: Date.now(),
    };
    const [verdict] = await runInDurableObject(platformDesk(env, record.voice_id, key.platformName), (gate: VoiceGate) =>
      Promise.all([gate.decide(question), gate.holdRecord(withdrawn)]),
    );
    expect(verdict).toMatchObject({ outcome: 'blocked', reason: 'no_consent' });
  });

  it('purges redeemed bits once their tokens are past expiry and retention, and keeps the rest', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast']);
    const old = await approve(key, voiceId, { nowMs: TWENTY_MINUTES_AGO });
    expect((await redeem(key, old, TWENTY_MINUTES_AGO + 1_000)).status).toBe(200);
    const desk = platformDesk(env, voiceId, key.platformName);
    const blocks = () =>
      runInDurableObject(desk, async (_gate: VoiceGate, state) => [...(await state.storage.list({ prefix: 'redeemed:' })).keys()]);
    // The purge is due at once (its time is past), so the alarm may already have run.
    await runDurableObjectAlarm(desk);
    expect(await blocks()).toEqual([]);
    // Its bit is gone, and the Worker refuses the token as expired before any desk is asked.
    await expectProblem(await redeem(key, old), 410, 'token_expired');

    const fresh = await approve(key, voiceId);
    expect((await redeem(key, fresh)).status).toBe(200);
    expect(await runDurableObjectAlarm(desk)).toBe(true);
    expect(await blocks()).toEqual(['redeemed:0']);
    await expectProblem(await redeem(key, fresh), 409, 'token_already_used');
  });

  it('survives a new instance of the desk: earlier tokens redeem once, new serials come after the reservation', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast']);
    const token = await approve(key, voiceId);
    const claims = decodeJwtPart(token.split('.')[1]!) as Parameters<VoiceGate['redeem']>[0];
    const desk = platformDesk(env, voiceId, key.platformName);
    const afterEviction = <T>(use: (gate: VoiceGate) => Promise<T>) =>
      runInDurableObject(desk, (_live: VoiceGate, state) => use(new VoiceGate(state, env)));

    expect(await afterEviction((gate) => gate.redeem(claims, Date.now()))).toBe('redeemed');
    expect(await afterEviction((gate) => gate.redeem(claims, Date.now()))).toBe('already_used');
    const next = await afterEviction((gate) =>
      gate.decide({
        voice_id: voiceId,
        platform_name: key.platformName,
        intended_use: 'podcast',
        license_token_hash: null,
        check_id: crypto.randomUUID(),
        holder: `platform:${key.platformName}`,
        now_ms: Date.now(),
      }),
    );
    expect(next.outcome).toBe('approved');
    expect(serialOf((next as { jti: string }).jti)).toBe(4096);
  });
});
