import { describe, expect, it } from 'vitest';
import { expectApproved } from './testing/approved.js';
import { findAuditRecord } from './testing/audit.js';
import {
  edgeFetch,
  expectProblem,
  GATE_PATH,
  jsonPost,
  licence,
  licensedVoice,
  newPlatformKey,
  publishVoice,
  REDEEM_PATH,
  uniqueIp,
  uniqueName,
  voiceRecord,
} from './testing/edge.js';

const VARIANT_B = { settings: { GATE_VARIANT: 'B' } };
const anonymous = () => ({ 'cf-connecting-ip': uniqueIp() });

async function checkB(body: Record<string, unknown>, headers: Record<string, string> = anonymous()) {
  return edgeFetch(GATE_PATH, jsonPost(body, headers), VARIANT_B);
}

describe('pre-synthesis check, Variant B (public gate, approval_token only)', () => {
  it('approves without credentials and returns only approval_token', async () => {
    const platform = uniqueName('Public Platform');
    const { voiceId } = await licensedVoice(platform, ['music']);
    const response = await checkB({ voice_id: voiceId, platform_name: platform, intended_use: 'music' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expectApproved(body, { variant: 'B', voiceId });
    expect(response.headers.get('deprecation')).toBeNull();
    expect(await findAuditRecord(body.check_id as string)).toMatchObject({ caller_type: 'anonymous', decision: 'allow' });
  });

  it('blocks with each reason, exactly as Variant A does', async () => {
    const platform = uniqueName('Public Platform');
    const withdrawn = voiceRecord({ consent_status: 'withdrawn', licenses: [await licence(platform, ['music'])] });
    const unlicensed = voiceRecord();
    const wrongScope = voiceRecord({ licenses: [await licence(platform, ['podcast'])] });
    for (const record of [withdrawn, unlicensed, wrongScope]) await publishVoice(record);
    const reasons = [];
    for (const record of [withdrawn, unlicensed, wrongScope]) {
      const body = (await (await checkB({ voice_id: record.voice_id, platform_name: platform, intended_use: 'music' })).json()) as Record<
        string,
        unknown
      >;
      expect(body).toMatchObject({
        status: 'blocked',
        action: 'authorization_denied',
        authorization_denied: true,
        voice_id: record.voice_id,
      });
      expect(body.license_url).toBe(`https://origin.test/licensing?voice_id=${record.voice_id}`);
      reasons.push(body.reason);
    }
    expect(reasons).toEqual(['no_consent', 'no_license', 'scope_mismatch']);
  });

  it('answers an unknown voice with no_registry_record', async () => {
    const response = await checkB({ voice_id: crypto.randomUUID(), platform_name: 'Anyone', intended_use: 'gaming' });
    expect(await response.json()).toMatchObject({ action: 'no_registry_record', platform_decision_required: true, voice_id: null });
  });

  it('still checks credentials that are sent: 401 when wrong, 403 for another platform', async () => {
    const key = await newPlatformKey();
    const body = { voice_id: crypto.randomUUID(), platform_name: key.platformName, intended_use: 'gaming' };
    await expectProblem(await checkB(body, { 'x-api-key': 'vip_not_a_real_key' }), 401, 'invalid_credentials');
    await expectProblem(await checkB({ ...body, platform_name: 'Not Mine' }, { 'x-api-key': key.apiKey }), 403, 'platform_mismatch');
    const accepted = await checkB(body, { 'x-api-key': key.apiKey });
    expect(accepted.status).toBe(200);
    expect(accepted.headers.get('ratelimit-policy')).toBe('"default";q=1000;w=60');
  });

  it('answers 422 for an invalid body', async () => {
    await expectProblem(await checkB({ voice_id: crypto.randomUUID() }), 422, 'validation_failed');
  });

  it('lets an anonymous caller redeem an anonymously obtained token, but not a platform’s token', async () => {
    const platform = uniqueName('Public Platform');
    const { voiceId } = await licensedVoice(platform, ['music']);
    const ip = { 'cf-connecting-ip': uniqueIp() };
    const anonymousApproval = (await (await checkB({ voice_id: voiceId, platform_name: platform, intended_use: 'music' }, ip)).json()) as {
      approval_token: string;
    };
    const redeem = (token: string, headers: Record<string, string>) => edgeFetch(REDEEM_PATH, jsonPost({ token }, headers), VARIANT_B);
    expect((await redeem(anonymousApproval.approval_token, ip)).status).toBe(200);

    const key = await newPlatformKey(platform);
    const keyed = (await (
      await checkB({ voice_id: voiceId, platform_name: platform, intended_use: 'music' }, { 'x-api-key': key.apiKey })
    ).json()) as {
      approval_token: string;
    };
    await expectProblem(await redeem(keyed.approval_token, ip), 403, 'platform_mismatch');
    expect((await redeem(keyed.approval_token, { 'x-api-key': key.apiKey })).status).toBe(200);
  });
});
