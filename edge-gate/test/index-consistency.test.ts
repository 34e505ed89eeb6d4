import { env, SELF } from 'cloudflare:test';
import { kvKeys } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { applyKeyUpdate } from '../src/objects/caller-home-client.js';
import {
  EDGE,
  expectProblem,
  gateCheck,
  jsonPost,
  keyRecord,
  licensedVoice,
  newPlatformKey,
  nextVersion,
  type PlatformKey,
  REDEEM_PATH,
} from './testing/edge.js';

/**
 * The edges of DECISIONS.md "The gate's reads off the hot path": who an API key is may come from an
 * isolate's copy of the KV index for a minute, but whether it is revoked is asked of its home shard
 * on every request. These revoke the key at its shard only, so KV and the isolate still vouch for it.
 */
const body = (key: PlatformKey, voiceId: string = crypto.randomUUID()) => ({
  voice_id: voiceId,
  platform_name: key.platformName,
  intended_use: 'audiobook',
});

async function revokeAtHomeShardOnly(key: PlatformKey, version = nextVersion()) {
  expect(await applyKeyUpdate(env, { kind: 'api_key', key_hash: key.keyHash, version, record: keyRecord(key, true) })).toBe('applied');
  const indexed = await env.EDGE_INDEX.get<{ record: { revoked: boolean } }>(kvKeys.apiKey(key.keyHash), 'json');
  expect(indexed?.record.revoked).toBe(false);
}

describe('API key revocation: the home shard over the index copy', () => {
  it('refuses a key revoked at its home shard although the index copy, already read, says it is live', async () => {
    const key = await newPlatformKey();
    expect((await gateCheck(body(key), { 'x-api-key': key.apiKey })).status).toBe(200);
    await revokeAtHomeShardOnly(key);
    await expectProblem(await gateCheck(body(key), { 'x-api-key': key.apiKey }), 401, 'invalid_credentials');
  });

  it('answers 401 before a body error for such a key, as for a key the index knows revoked', async () => {
    const key = await newPlatformKey();
    await revokeAtHomeShardOnly(key);
    await expectProblem(await gateCheck({ voice_id: 'not a uuid' }, { 'x-api-key': key.apiKey }), 401, 'invalid_credentials');
    await expectProblem(
      await gateCheck({ ...body(key), platform_name: 'Someone Else' }, { 'x-api-key': key.apiKey }),
      401,
      'invalid_credentials',
    );
  });

  it('refuses an approval and a redemption with such a key, and the token issued before stays unredeemed', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName);
    const approved = (await (await gateCheck(body(key, voiceId), { 'x-api-key': key.apiKey })).json()) as { authorization_token: string };
    await revokeAtHomeShardOnly(key);
    await expectProblem(await gateCheck(body(key, voiceId), { 'x-api-key': key.apiKey }), 401, 'invalid_credentials');
    const redeem = () =>
      SELF.fetch(`${EDGE}${REDEEM_PATH}`, jsonPost({ token: approved.authorization_token }, { 'x-api-key': key.apiKey }));
    await expectProblem(await redeem(), 401, 'invalid_credentials');
  });

  it('keeps the key revoked at its shard when an older live update is replayed', async () => {
    const key = await newPlatformKey();
    const revokedAt = nextVersion();
    await revokeAtHomeShardOnly(key, revokedAt);
    const replay = { kind: 'api_key', key_hash: key.keyHash, version: revokedAt - 1, record: keyRecord(key, false) } as const;
    expect(await applyKeyUpdate(env, replay)).toBe('stale');
    await expectProblem(await gateCheck(body(key), { 'x-api-key': key.apiKey }), 401, 'invalid_credentials');
  });
});
