import { env, runInDurableObject, SELF } from 'cloudflare:test';
import { kvKeys } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { platformDesk } from '../src/objects/platform-desk-client.js';
import type { VoiceGate } from '../src/objects/voice-gate.js';
import {
  EDGE,
  expectProblem,
  gateCheck,
  jsonPost,
  licence,
  newPlatformKey,
  nextVersion,
  type PlatformKey,
  publishVoice,
  REDEEM_PATH,
  sync,
  voiceRecord,
} from './testing/edge.js';

/**
 * A popular voice licensed to many platforms at once: its approvals are spread over one desk per
 * platform (VoiceGate), and a withdrawal or erasure must still stop every one of them by the time
 * the origin's sync is acknowledged, whatever a lagging KV copy says.
 */
const PLATFORMS = 40;

async function hotVoice() {
  const keys = await Promise.all(Array.from({ length: PLATFORMS }, () => newPlatformKey()));
  const grants = await Promise.all(keys.map((key) => licence(key.platformName, ['audiobook'])));
  const record = voiceRecord({ licenses: grants });
  await publishVoice(record);
  return { keys, record };
}

const ask = (key: PlatformKey, voiceId: string) =>
  gateCheck({ voice_id: voiceId, platform_name: key.platformName, intended_use: 'audiobook' }, { 'x-api-key': key.apiKey });

async function approvalsOf(keys: PlatformKey[], voiceId: string): Promise<string[]> {
  return Promise.all(
    keys.map(async (key) => {
      const body = (await (await ask(key, voiceId)).json()) as { status: string; authorization_token: string };
      expect(body.status).toBe('approved');
      return body.authorization_token;
    }),
  );
}

const redeem = (key: PlatformKey, token: string) => SELF.fetch(`${EDGE}${REDEEM_PATH}`, jsonPost({ token }, { 'x-api-key': key.apiKey }));

/** What a platform's desk of the voice keeps for its tokens: the key of its seals, and serials reserved. */
const deskOf = (voiceId: string, platformName: string) =>
  runInDurableObject(platformDesk(env, voiceId, platformName), async (_gate: VoiceGate, state) => ({
    sealKey: (await state.storage.get('seal_key')) !== undefined,
    serialsReserved: (await state.storage.get<number>('serials_reserved')) ?? 0,
  }));

describe('a hot voice: approvals spread over one desk per licensed platform', { timeout: 60_000 }, () => {
  it("issues each platform's tokens at that platform's own desk", async () => {
    const { keys, record } = await hotVoice();
    const tokens = await approvalsOf(keys, record.voice_id);
    const desks = await Promise.all(keys.map((key) => deskOf(record.voice_id, key.platformName)));
    expect(desks).toEqual(keys.map(() => ({ sealKey: true, serialsReserved: 4096 })));
    expect(await deskOf(record.voice_id, 'Never Licensed')).toEqual({ sealKey: false, serialsReserved: 0 });
    // Each token is its own desk's: redeemed there once, by its platform.
    const answers = await Promise.all(keys.map((key, index) => redeem(key, tokens[index]!)));
    expect(answers.map((answer) => answer.status)).toEqual(keys.map(() => 200));
  });

  it('stops every approval and every outstanding token once a withdrawal is acknowledged, even against a lagging KV copy', async () => {
    const { keys, record } = await hotVoice();
    const tokens = await approvalsOf(keys, record.voice_id);
    const approvedCopy = await env.EDGE_INDEX.get(kvKeys.voice(record.voice_id));

    await publishVoice({ ...record, consent_status: 'withdrawn' });
    // KV lags behind in other locations: the approved copy sends every request on to its desk.
    await env.EDGE_INDEX.put(kvKeys.voice(record.voice_id), approvedCopy!);
    const answers = await Promise.all(keys.map(async (key) => (await ask(key, record.voice_id)).json()));
    expect(answers).toEqual(keys.map(() => expect.objectContaining({ status: 'blocked', reason: 'no_consent' })));
    await Promise.all(keys.map(async (key, index) => expectProblem(await redeem(key, tokens[index]!), 410, 'token_revoked')));
  });

  it('voids every desk’s tokens when the voice is erased', async () => {
    const { keys, record } = await hotVoice();
    const tokens = await approvalsOf(keys, record.voice_id);
    const approvedCopy = await env.EDGE_INDEX.get(kvKeys.voice(record.voice_id));

    await sync([{ kind: 'voice', voice_id: record.voice_id, version: nextVersion(), record: null }]);
    await env.EDGE_INDEX.put(kvKeys.voice(record.voice_id), approvedCopy!);
    const answers = await Promise.all(keys.map(async (key) => (await ask(key, record.voice_id)).json()));
    expect(answers.every((answer) => (answer as { status?: string }).status !== 'approved')).toBe(true);
    await Promise.all(keys.map(async (key, index) => expectProblem(await redeem(key, tokens[index]!), 410, 'token_revoked')));
    const desks = await Promise.all(keys.map((key) => deskOf(record.voice_id, key.platformName)));
    expect(desks.map((desk) => desk.sealKey)).toEqual(keys.map(() => false));
  });
});
