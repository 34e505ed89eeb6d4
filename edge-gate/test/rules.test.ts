import { describe, expect, it } from 'vitest';
import { evaluate, type GateQuery } from '../src/gate/rules.js';
import { licence, voiceRecord } from './testing/edge.js';

const NOW = Date.parse('2026-11-22T12:00:00Z');
const query = (overrides: Partial<GateQuery> = {}): GateQuery => ({
  platform_name: 'Acme',
  intended_use: 'podcast',
  license_token_hash: null,
  ...overrides,
});

describe('gate rules (docs/CONTRACT.md#states-and-gate-rules), without HTTP', () => {
  it('checks consent before licences', async () => {
    const record = voiceRecord({ consent_status: 'withdrawn', licenses: [await licence('Acme', ['podcast'])] });
    expect(evaluate(record, query(), NOW)).toEqual({
      outcome: 'blocked',
      reason: 'no_consent',
      consent_status: 'withdrawn',
      license_status: 'licensed',
    });
  });

  it('counts a licence only until the instant it expires', async () => {
    const record = voiceRecord({ licenses: [await licence('Acme', ['podcast'], { expires_at: new Date(NOW).toISOString() })] });
    expect(evaluate(record, query(), NOW - 1).outcome).toBe('approved');
    expect(evaluate(record, query(), NOW)).toMatchObject({ outcome: 'blocked', reason: 'no_license' });
  });

  it('matches platform names exactly', async () => {
    const record = voiceRecord({ licenses: [await licence('Acme', ['podcast'])] });
    expect(evaluate(record, query({ platform_name: 'acme' }), NOW)).toMatchObject({ reason: 'no_license' });
  });

  it('judges scope on the licence the token names when a token is given', async () => {
    const narrow = await licence('Acme', ['music']);
    const wide = await licence('Acme', ['podcast']);
    const record = voiceRecord({ licenses: [narrow, wide] });
    expect(evaluate(record, query(), NOW).outcome).toBe('approved');
    expect(evaluate(record, query({ license_token_hash: narrow.token_hash }), NOW)).toMatchObject({ reason: 'scope_mismatch' });
    expect(evaluate(record, query({ license_token_hash: wide.token_hash }), NOW).outcome).toBe('approved');
  });

  it('knows nothing about a voice without a record', () => {
    expect(evaluate(null, query(), NOW)).toEqual({ outcome: 'unknown' });
  });
});
