import { SELF } from 'cloudflare:test';
import { type AuditLookupResponse, INTERNAL_AUDIT_LOOKUP_PATH, INTERNAL_AUDIT_PULL_PATH } from '@vip/shared-schema';
import { describe, expect, it } from 'vitest';
import { EDGE, expectProblem, gateCheck, newPlatformKey, signedPost } from './testing/edge.js';

async function lookup(checkId: string): Promise<AuditLookupResponse> {
  const response = await signedPost(INTERNAL_AUDIT_LOOKUP_PATH, JSON.stringify({ check_id: checkId }));
  expect(response.status).toBe(200);
  return (await response.json()) as AuditLookupResponse;
}

describe('POST /internal/v1/audit-lookup (a check the origin has not collected yet)', () => {
  it('says whose a pending check is, only what visibility needs, and nothing once the origin acknowledged it', async () => {
    const key = await newPlatformKey();
    const voiceId = crypto.randomUUID();
    const response = await gateCheck(
      { voice_id: voiceId, platform_name: key.platformName, intended_use: 'audiobook' },
      { 'x-api-key': key.apiKey },
    );
    const { check_id } = (await response.json()) as { check_id: string };

    expect(await lookup(check_id)).toEqual({
      held: { voice_id: voiceId, platform_name: key.platformName, caller_type: 'api_key', caller_id: key.keyId },
    });
    expect(await lookup(check_id.toUpperCase())).toEqual(await lookup(check_id));
    expect(await lookup(crypto.randomUUID())).toEqual({ held: null });

    expect((await signedPost(INTERNAL_AUDIT_PULL_PATH, JSON.stringify({ ack: [check_id], limit: 1 }))).status).toBe(200);
    expect(await lookup(check_id)).toEqual({ held: null });
  });

  it('refuses an unsigned lookup, and one without a check id', async () => {
    const response = await SELF.fetch(`${EDGE}${INTERNAL_AUDIT_LOOKUP_PATH}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ check_id: crypto.randomUUID() }),
    });
    await expectProblem(response, 401, 'invalid_signature');
    await expectProblem(await signedPost(INTERNAL_AUDIT_LOOKUP_PATH, JSON.stringify({})), 422, 'validation_failed');
  });
});
