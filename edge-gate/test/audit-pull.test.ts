import { SELF } from 'cloudflare:test';
import { type AuditRecord, INTERNAL_AUDIT_PULL_PATH } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { findAuditRecord } from './testing/audit.js';
import { EDGE, edgeFetch, expectProblem, GATE_PATH, gateCheck, jsonPost, newPlatformKey, signedPost } from './testing/edge.js';

async function pull(body: { ack?: string[]; limit?: number }) {
  const response = await signedPost(INTERNAL_AUDIT_PULL_PATH, JSON.stringify(body));
  expect(response.status).toBe(200);
  return (await response.json()) as { acked: number; records: AuditRecord[] };
}

describe('POST /internal/v1/audit-pull (audit hand-off to the origin)', () => {
  it('hands out pending decisions, oldest first, until the origin acknowledges them', async () => {
    const key = await newPlatformKey();
    // Decided "in 2000", so it sorts ahead of every record other test files leave pending.
    const response = await edgeFetch(
      GATE_PATH,
      jsonPost({ voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'gaming' }, { 'x-api-key': key.apiKey }),
      { nowMs: Date.parse('2000-01-01T00:00:00Z') },
    );
    const { check_id } = (await response.json()) as { check_id: string };

    const { records } = await pull({ limit: 500 });
    expect(records.find((record) => record.check_id === check_id)).toMatchObject({
      check_id,
      kind: 'gate.decision',
      decided_at: '2000-01-01T00:00:00.000Z',
      action: 'no_registry_record',
      caller_type: 'api_key',
      caller_id: key.keyId,
    });
    expect(await findAuditRecord(check_id)).not.toBeNull();

    expect((await pull({ ack: [check_id], limit: 1 })).acked).toBe(1);
    expect(await findAuditRecord(check_id)).toBeNull();
    expect((await pull({ ack: [check_id], limit: 1 })).acked).toBe(0);
  });

  it('deletes acknowledged records it did not hand out in this life (evicted between pull and acknowledgement)', async () => {
    const key = await newPlatformKey();
    const decide = async () => {
      const response = await gateCheck(
        { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'audiobook' },
        { 'x-api-key': key.apiKey },
      );
      return ((await response.json()) as { check_id: string }).check_id;
    };
    const [first, second, kept] = [await decide(), await decide(), await decide()];
    // Never pulled, so the shard has no row of its own for them: found by check_id.
    expect((await pull({ ack: [first, second, crypto.randomUUID()], limit: 1 })).acked).toBe(2);
    expect(await findAuditRecord(first)).toBeNull();
    expect(await findAuditRecord(second)).toBeNull();
    expect(await findAuditRecord(kept)).not.toBeNull();
  });

  it('refuses an unsigned pull', async () => {
    const response = await SELF.fetch(`${EDGE}${INTERNAL_AUDIT_PULL_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"limit":10}',
    });
    await expectProblem(response, 401, 'invalid_signature');
  });

  it('answers 422 for an out-of-range limit', async () => {
    await expectProblem(await signedPost(INTERNAL_AUDIT_PULL_PATH, JSON.stringify({ limit: 0 })), 422, 'validation_failed');
  });
});
