import { SELF } from 'cloudflare:test';
import { redeemResultSchema } from '@vip/shared-schema';
import { WATERMARK_ALGORITHM } from '@vip/shared-schema/watermark/index';
import { generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { findAuditRecord } from './testing/audit.js';
import {
  accessTokenFor,
  decodeJwtPart,
  EDGE,
  edgeFetch,
  expectProblem,
  GATE_PATH,
  jsonPost,
  licensedVoice,
  newPlatformKey,
  type PlatformKey,
  publishVoice,
  REDEEM_PATH,
  serveOriginJwks,
} from './testing/edge.js';

const redeem = (token: string, headers: Record<string, string>) => SELF.fetch(`${EDGE}${REDEEM_PATH}`, jsonPost({ token }, headers));

async function approvedToken(key: PlatformKey, options: { nowMs?: number } = {}) {
  const { record } = await licensedVoice(key.platformName, ['podcast']);
  const response = await edgeFetch(
    GATE_PATH,
    jsonPost({ voice_id: record.voice_id, platform_name: key.platformName, intended_use: 'podcast' }, { 'x-api-key': key.apiKey }),
    options,
  );
  const body = (await response.json()) as { authorization_token: string; check_id: string };
  return { token: body.authorization_token, checkId: body.check_id, record };
}

describe('POST /api/v1/protect/authorizations/redeem: happy path', () => {
  it('redeems a fresh token once and returns its claims', async () => {
    const key = await newPlatformKey();
    const { token, checkId, record } = await approvedToken(key);
    const response = await redeem(token, { 'x-api-key': key.apiKey });
    expect(response.status).toBe(200);
    const body = redeemResultSchema.parse(await response.json());
    expect(body).toEqual({
      voice_id: record.voice_id,
      platform_name: key.platformName,
      intended_use: 'podcast',
      check_id: checkId,
      jti: decodeJwtPart(token.split('.')[1]!).jti,
      redemption_check_id: expect.any(String),
      watermark: { alg: WATERMARK_ALGORITHM, id: expect.stringMatching(/^[0-9a-f]{10}$/) },
    });
    // The id travels to the origin beside the redemption's record, which it registers to.
    expect(await findAuditRecord(body.redemption_check_id)).toMatchObject({
      kind: 'authorization.redeemed',
      action: 'redeemed',
      decision: 'allow',
      token_jti: body.jti,
      caller_id: key.keyId,
      watermark_id: body.watermark.id,
    });
  });

  it('gives every synthesis a mark of its own', async () => {
    const key = await newPlatformKey();
    const ids = new Set<string>();
    for (let round = 0; round < 3; round++) {
      const { token } = await approvedToken(key);
      ids.add(redeemResultSchema.parse(await (await redeem(token, { 'x-api-key': key.apiKey })).json()).watermark.id);
    }
    expect(ids.size).toBe(3);
  });

  it('lets exactly one of 100 concurrent redemptions succeed', async () => {
    const key = await newPlatformKey();
    const { token } = await approvedToken(key);
    const responses = await Promise.all(Array.from({ length: 100 }, () => redeem(token, { 'x-api-key': key.apiKey })));
    const statuses = responses.map((response) => response.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1);
    expect(statuses.filter((status) => status === 409)).toHaveLength(99);
    await Promise.all(responses.map((response) => response.body?.cancel()));
  });

  it('lets the user who obtained a token with a Bearer credential redeem it', async () => {
    const fetchSpy = await serveOriginJwks();
    try {
      const key = await newPlatformKey();
      const { record } = await licensedVoice(key.platformName, ['podcast']);
      const bearer = { authorization: `Bearer ${await accessTokenFor({ sub: crypto.randomUUID(), role: 'admin' })}` };
      const gate = await SELF.fetch(
        `${EDGE}${GATE_PATH}`,
        jsonPost({ voice_id: record.voice_id, platform_name: key.platformName, intended_use: 'podcast' }, bearer),
      );
      const { authorization_token } = (await gate.json()) as { authorization_token: string };
      const otherUser = { authorization: `Bearer ${await accessTokenFor({ sub: crypto.randomUUID() })}` };
      await expectProblem(await redeem(authorization_token, otherUser), 403, 'platform_mismatch');
      expect((await redeem(authorization_token, bearer)).status).toBe(200);
    } finally {
      fetchSpy.mockRestore();
    }
  });
});

describe('POST /api/v1/protect/authorizations/redeem: refusals', () => {
  it('answers 409 token_already_used on a second redemption', async () => {
    const key = await newPlatformKey();
    const { token } = await approvedToken(key);
    expect((await redeem(token, { 'x-api-key': key.apiKey })).status).toBe(200);
    await expectProblem(await redeem(token, { 'x-api-key': key.apiKey }), 409, 'token_already_used');
  });

  it('answers 410 token_expired once the lifetime has passed', async () => {
    const key = await newPlatformKey();
    const { token } = await approvedToken(key, { nowMs: Date.now() - 301_000 });
    await expectProblem(await redeem(token, { 'x-api-key': key.apiKey }), 410, 'token_expired');
  });

  it('answers 403 when another platform tries to redeem', async () => {
    const key = await newPlatformKey();
    const other = await newPlatformKey();
    const { token } = await approvedToken(key);
    await expectProblem(await redeem(token, { 'x-api-key': other.apiKey }), 403, 'platform_mismatch');
    expect((await redeem(token, { 'x-api-key': key.apiKey })).status).toBe(200);
  });

  it('answers 401 for a tampered token or one signed by another key', async () => {
    const key = await newPlatformKey();
    const { token } = await approvedToken(key);
    const [header, payload, signature] = token.split('.');
    const claims = decodeJwtPart(payload!);
    const forgedPayload = btoa(JSON.stringify({ ...claims, intended_use: 'music' }))
      .replaceAll('+', '-')
      .replaceAll('/', '_')
      .replace(/=+$/, '');
    await expectProblem(await redeem(`${header}.${forgedPayload}.${signature}`, { 'x-api-key': key.apiKey }), 401, 'invalid_token');

    const stranger = await generateKeyPair('EdDSA');
    const foreign = await new SignJWT(claims).setProtectedHeader(decodeJwtPart(header!) as { alg: string }).sign(stranger.privateKey);
    await expectProblem(await redeem(foreign, { 'x-api-key': key.apiKey }), 401, 'invalid_token');
    await expectProblem(await redeem('not-a-jws', { 'x-api-key': key.apiKey }), 401, 'invalid_token');
  });

  it('answers 410 token_revoked when consent was withdrawn after the token was issued', async () => {
    const key = await newPlatformKey();
    const { token, record } = await approvedToken(key);
    await publishVoice({ ...record, consent_status: 'withdrawn' });
    await expectProblem(await redeem(token, { 'x-api-key': key.apiKey }), 410, 'token_revoked');
  });

  it('needs credentials in Variant A', async () => {
    const key = await newPlatformKey();
    const { token } = await approvedToken(key);
    await expectProblem(await redeem(token, {}), 401, 'authentication_required');
  });
});
