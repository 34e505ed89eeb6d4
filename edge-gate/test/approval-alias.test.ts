import { describe, expect, it } from 'vitest';
import { edgeFetch, GATE_PATH, jsonPost, licensedVoice, newPlatformKey } from './testing/edge.js';

const BEFORE_SUNSET = Date.parse('2026-09-01T12:00:00Z');
const AFTER_SUNSET = Date.parse('2026-11-22T12:00:00Z');

async function approve(options: { settings?: Record<string, string>; nowMs: number }) {
  const key = await newPlatformKey();
  const { voiceId } = await licensedVoice(key.platformName);
  const response = await edgeFetch(
    GATE_PATH,
    jsonPost({ voice_id: voiceId, platform_name: key.platformName, intended_use: 'audiobook' }, { 'x-api-key': key.apiKey }),
    options,
  );
  expect(response.status).toBe(200);
  return { response, body: (await response.json()) as Record<string, unknown> };
}

describe('Variant A approval_token alias (docs/CONTRACT.md#versioning, docs/CONTRACT.md#authorization-tokens)', () => {
  it('returns the alias with Deprecation and Sunset headers before the sunset date', async () => {
    const { response, body } = await approve({ nowMs: BEFORE_SUNSET });
    expect(body.approval_token).toBe(body.authorization_token);
    expect(response.headers.get('deprecation')).toBe(`@${Date.parse('2026-04-01T00:00:00Z') / 1000}`);
    expect(response.headers.get('sunset')).toBe('Thu, 17 Sep 2026 23:59:59 GMT');
    expect(response.headers.get('link')).toContain('rel="deprecation"');
    expect(body.expires_at).toBe(new Date(Math.floor(BEFORE_SUNSET / 1000) * 1000 + 300_000).toISOString());
  });

  it('drops the alias and its headers after the sunset date', async () => {
    const { response, body } = await approve({ nowMs: AFTER_SUNSET });
    expect(body).not.toHaveProperty('approval_token');
    expect(body.authorization_token).toEqual(expect.any(String));
    expect(response.headers.get('deprecation')).toBeNull();
    expect(response.headers.get('sunset')).toBeNull();
  });

  it('keeps the alias after the sunset when KEEP_APPROVAL_TOKEN_ALIAS=true', async () => {
    const { response, body } = await approve({ nowMs: AFTER_SUNSET, settings: { KEEP_APPROVAL_TOKEN_ALIAS: 'true' } });
    expect(body.approval_token).toBe(body.authorization_token);
    expect(response.headers.get('sunset')).toBe('Thu, 17 Sep 2026 23:59:59 GMT');
  });

  it('follows a configured sunset date', async () => {
    const { body } = await approve({ nowMs: AFTER_SUNSET, settings: { APPROVAL_TOKEN_SUNSET: '2027-01-31' } });
    expect(body.approval_token).toBe(body.authorization_token);
  });
});
