import { env, runInDurableObject, SELF } from 'cloudflare:test';
import { INTERNAL_SYNC_PATH, kvKeys, limits, signInternalRequest } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import type { VoiceGate } from '../src/objects/voice-gate.js';
import { voiceHome } from '../src/objects/voice-home-client.js';
import {
  EDGE,
  expectProblem,
  gateCheck,
  keyRecord,
  licence,
  newPlatformKey,
  nextVersion,
  publishVoice,
  signedPost,
  sync,
  voiceRecord,
} from './testing/edge.js';

const validBatch = () =>
  JSON.stringify({ updates: [{ kind: 'voice', voice_id: crypto.randomUUID(), version: nextVersion(), record: null }] });

describe('POST /internal/v1/index-sync: signatures', () => {
  it('refuses a request without signature headers', async () => {
    const response = await SELF.fetch(`${EDGE}${INTERNAL_SYNC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: validBatch(),
    });
    await expectProblem(response, 401, 'invalid_signature');
  });

  it('refuses a signature made with another secret', async () => {
    await expectProblem(
      await signedPost(INTERNAL_SYNC_PATH, validBatch(), { secret: 'not-the-internal-secret' }),
      401,
      'invalid_signature',
    );
  });

  it('refuses a body changed after signing', async () => {
    const body = validBatch();
    const headers = await signInternalRequest(
      env.INTERNAL_SECRET as string,
      'POST',
      INTERNAL_SYNC_PATH,
      body,
      Math.floor(Date.now() / 1000),
    );
    const tampered = await SELF.fetch(`${EDGE}${INTERNAL_SYNC_PATH}`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: body.replace('"record":null', '"record": null'),
    });
    await expectProblem(tampered, 401, 'invalid_signature');
  });

  it('refuses a timestamp outside the allowed skew (replay)', async () => {
    const tenMinutesAgo = Math.floor(Date.now() / 1000) - 600;
    await expectProblem(await signedPost(INTERNAL_SYNC_PATH, validBatch(), { atSeconds: tenMinutesAgo }), 401, 'invalid_signature');
  });

  it('checks the signature before it looks at the body', async () => {
    const response = await SELF.fetch(`${EDGE}${INTERNAL_SYNC_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: '{',
    });
    await expectProblem(response, 401, 'invalid_signature');
  });

  it('answers 422 for a signed batch off the schema, naming the field', async () => {
    const body = JSON.stringify({ updates: [{ kind: 'voice', voice_id: 'not-a-uuid', version: 1, record: null }] });
    const problem = await expectProblem(await signedPost(INTERNAL_SYNC_PATH, body), 422, 'validation_failed');
    expect(problem.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'body.updates.0.voice_id' })]));
  });
});

describe('POST /internal/v1/index-sync: addressing', () => {
  it('refuses a voice record filed under another voice id', async () => {
    const body = JSON.stringify({
      updates: [{ kind: 'voice', voice_id: crypto.randomUUID(), version: nextVersion(), record: voiceRecord() }],
    });
    const problem = await expectProblem(await signedPost(INTERNAL_SYNC_PATH, body), 422, 'validation_failed');
    expect(problem.errors).toEqual([{ field: 'body.updates.0.record.voice_id', message: 'differs from the update voice_id' }]);
  });
});

describe('POST /internal/v1/index-sync: version ordering', () => {
  it('applies a newer voice version and ignores an older one', async () => {
    const record = voiceRecord({ consent_status: 'active' });
    expect(await publishVoice(record, nextVersion())).toEqual({ applied: 1, stale: 0 });
    const newer = nextVersion();
    expect(await publishVoice({ ...record, consent_status: 'withdrawn' }, newer)).toEqual({ applied: 1, stale: 0 });
    expect(await publishVoice({ ...record, consent_status: 'active' }, newer - 1)).toEqual({ applied: 0, stale: 1 });

    const kv = await env.EDGE_INDEX.get<{ version: number; record: { consent_status: string } }>(kvKeys.voice(record.voice_id), 'json');
    expect(kv).toMatchObject({ version: newer, record: { consent_status: 'withdrawn' } });
    const stored = await runInDurableObject(voiceHome(env, record.voice_id), (instance: VoiceGate) =>
      instance.applyIndexUpdate(record.voice_id, newer, null),
    );
    expect(stored).toBe('stale');
  });

  it('keeps a deleted voice as a tombstone so a stale create cannot resurrect it', async () => {
    const record = voiceRecord();
    const created = nextVersion();
    await publishVoice(record, created);
    const deleted = nextVersion();
    expect(await sync([{ kind: 'voice', voice_id: record.voice_id, version: deleted, record: null }])).toEqual({ applied: 1, stale: 0 });
    expect(await env.EDGE_INDEX.get(kvKeys.voice(record.voice_id))).toBeNull();

    expect(await publishVoice(record, created)).toEqual({ applied: 0, stale: 1 });
    expect(await env.EDGE_INDEX.get(kvKeys.voice(record.voice_id))).toBeNull();
  });

  it('keeps a revoked API key revoked when an older create is replayed', async () => {
    const key = await newPlatformKey();
    const revokedAt = nextVersion();
    await sync([{ kind: 'api_key', key_hash: key.keyHash, version: revokedAt, record: keyRecord(key, true) }]);
    expect(await sync([{ kind: 'api_key', key_hash: key.keyHash, version: revokedAt - 1, record: keyRecord(key, false) }])).toEqual({
      applied: 0,
      stale: 1,
    });
    const response = await gateCheck(
      { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'podcast' },
      { 'x-api-key': key.apiKey },
    );
    await expectProblem(response, 401, 'invalid_credentials');
  });

  it('takes a batch far larger than a public request body', async () => {
    const licences = await Promise.all(['A', 'B', 'C'].map((name) => licence(`Platform ${name}`, ['podcast', 'music'])));
    const updates = Array.from({ length: 100 }, () => {
      const record = voiceRecord({ licenses: licences.map(({ token: _token, ...rest }) => rest) });
      return { kind: 'voice' as const, voice_id: record.voice_id, version: nextVersion(), record };
    });
    const body = JSON.stringify({ updates });
    expect(body.length).toBeGreaterThan(limits.jsonBodyMaxBytes);
    const response = await signedPost(INTERNAL_SYNC_PATH, body);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ applied: 100, stale: 0 });
  });

  it('counts applied and stale updates of one batch', async () => {
    const key = await newPlatformKey();
    const ack = await sync([
      { kind: 'api_key', key_hash: key.keyHash, version: 1, record: keyRecord(key, true) },
      { kind: 'voice', voice_id: crypto.randomUUID(), version: nextVersion(), record: null },
    ]);
    expect(ack).toEqual({ applied: 1, stale: 1 });
  });
});
