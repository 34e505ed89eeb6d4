import { describe, expect, it } from 'vitest';
import { auditRecordsOfVoice } from './testing/audit.js';
import { burst, edgeFetch, expectProblem, GATE_PATH, jsonPost, licensedVoice, newPlatformKey } from './testing/edge.js';

/** Pinned inside one window, so a minute or hour boundary cannot split a run. */
const PINNED = Date.parse('2026-11-22T10:20:15Z');

describe('limits (docs/CONTRACT.md#limits)', () => {
  it('allows exactly 1,000 gate requests per minute per API key, then 429', async () => {
    const key = await newPlatformKey();
    const send = () =>
      edgeFetch(
        GATE_PATH,
        jsonPost({ voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'music' }, { 'x-api-key': key.apiKey }),
        { nowMs: PINNED },
      );
    const statuses = await burst(1010, send);
    expect(statuses.filter((status) => status === 200)).toHaveLength(1000);
    expect(statuses.filter((status) => status === 429)).toHaveLength(10);

    const refused = await send();
    expect((await expectProblem(refused, 429, 'rate_limited')).detail).toBe(
      'Limit of 1000 gate checks with this API key per 60 s reached; try again in 45 s.',
    );
    expect(refused.headers.get('retry-after')).toBe('45');
    expect(refused.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=60');
    expect(refused.headers.get('ratelimit')).toBe('"default";r=0;t=45');

    const otherKey = await newPlatformKey();
    const fresh = await edgeFetch(
      GATE_PATH,
      jsonPost(
        { voice_id: crypto.randomUUID(), platform_name: otherKey.platformName, intended_use: 'music' },
        { 'x-api-key': otherKey.apiKey },
      ),
      { nowMs: PINNED },
    );
    expect(fresh.headers.get('ratelimit')).toBe('"default";r=999;t=45');
    const nextMinute = await edgeFetch(
      GATE_PATH,
      jsonPost({ voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'music' }, { 'x-api-key': key.apiKey }),
      { nowMs: PINNED + 60_000 },
    );
    expect(nextMinute.status).toBe(200);
  }, 60_000);

  it('counts approvals exactly too: over the limit no token leaves and nothing is recorded, until the next window', async () => {
    const key = await newPlatformKey();
    const { voiceId } = await licensedVoice(key.platformName, ['podcast']);
    const ask = (nowMs: number) =>
      edgeFetch(
        GATE_PATH,
        jsonPost({ voice_id: voiceId, platform_name: key.platformName, intended_use: 'podcast' }, { 'x-api-key': key.apiKey }),
        { settings: { GATE_LIMIT_PER_MINUTE: '5' }, nowMs },
      );
    // Concurrent first (each decided by VoiceGate before it is counted), then one by one (counted first).
    const answers = [...(await Promise.all(Array.from({ length: 8 }, () => ask(PINNED)))), await ask(PINNED), await ask(PINNED)];
    const approved = answers.filter((answer) => answer.status === 200);
    expect(approved).toHaveLength(5);
    for (const answer of answers.filter((answer) => answer.status !== 200)) await expectProblem(answer, 429, 'rate_limited');
    const bodies = (await Promise.all(approved.map((answer) => answer.json()))) as { status: string; authorization_token: string }[];
    expect(bodies.every((body) => body.status === 'approved' && body.authorization_token)).toBe(true);
    const recorded = await auditRecordsOfVoice(voiceId);
    expect(recorded).toHaveLength(5);
    expect(recorded.every((record) => record.action === 'authorized' && record.token_jti)).toBe(true);

    const nextMinute = await ask(PINNED + 60_000);
    expect(nextMinute.status).toBe(200);
    expect(((await nextMinute.json()) as { status: string }).status).toBe('approved');
    expect(await auditRecordsOfVoice(voiceId)).toHaveLength(6);
  });
});
