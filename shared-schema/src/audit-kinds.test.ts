import { describe, expect, it } from 'vitest';
import { auditRecordSchema } from './audit.js';
import { AUDIT_KIND_RULES, AUDIT_KINDS, type AuditAction, type AuditKind, auditEntryWords, buildAuditRecord } from './audit-kinds.js';

const base = { check_id: '00000000-0000-4000-8000-000000000001', decided_at: new Date('2026-11-26T06:00:00.000Z') };
const entry = (record: ReturnType<typeof buildAuditRecord>) => ({
  ...record,
  seq: 1,
  recorded_at: '2026-11-26T06:00:01.000Z',
  prev_hash: '0'.repeat(64),
  entry_hash: '1'.repeat(64),
});

describe('buildAuditRecord', () => {
  it('builds a valid record for every action of every kind, its decision the one the table gives the action', () => {
    for (const kind of AUDIT_KINDS) {
      for (const [action, decision] of Object.entries(AUDIT_KIND_RULES[kind].actions)) {
        const record = buildAuditRecord(kind, { ...base, action: action as AuditAction, caller_type: 'system' } as never);
        expect(auditRecordSchema.parse(record)).toEqual(record);
        expect(record).toMatchObject({ kind, action, decision });
      }
    }
  });

  it('fills what an emitter leaves out with null, and the only action of a kind of one action', () => {
    expect(buildAuditRecord('screening', { ...base, platform_name: 'acme', caller_type: 'api_key', caller_id: 'key-1' })).toEqual({
      check_id: base.check_id,
      kind: 'screening',
      decided_at: '2026-11-26T06:00:00.000Z',
      voice_id: null,
      platform_name: 'acme',
      intended_use: null,
      decision: null,
      action: 'screened',
      reason: null,
      license_status: null,
      consent_status: null,
      caller_type: 'api_key',
      caller_id: 'key-1',
      token_jti: null,
    });
    expect(buildAuditRecord('voice.review', { ...base, action: 'held', caller_type: 'system' }).decision).toBe('unresolved');
    expect(buildAuditRecord('authorization.redeemed', { ...base, action: 'refused', caller_type: 'api_key' }).decision).toBe('deny');
  });

  it('refuses a record that names a reader its kind does not allow', () => {
    // A biometric consent names no voice yet: the voice's owner-to-be is its only reader.
    expect(() => buildAuditRecord('biometric_consent.granted', { ...base, voice_id: base.check_id, caller_type: 'user' })).toThrow(
      /reader/,
    );
    // A refused enrollment is the service's: the refused caller would learn the matched voice's id.
    expect(() => buildAuditRecord('enrollment.refused', { ...base, voice_id: base.check_id, caller_type: 'user', caller_id: 'u' })).toThrow(
      /reader/,
    );
    expect(() => buildAuditRecord('biometric_consent.granted', { ...base, platform_name: 'acme', caller_type: 'user' })).toThrow(/reader/);
  });

  it('takes only an action of the kind, and needs one where the kind has several', () => {
    // @ts-expect-error a review is held, cleared or rejected: the action must be named
    expect(() => buildAuditRecord('voice.review', { ...base, caller_type: 'system' })).toThrow(/no action/);
    // @ts-expect-error a screening is never deleted
    expect(() => buildAuditRecord('screening', { ...base, action: 'deleted', caller_type: 'system' })).toThrow(/no action/);
  });
});

describe('the table', () => {
  it("words every kind's entries for the console", () => {
    const gate = buildAuditRecord('gate.decision', {
      ...base,
      action: 'authorization_denied',
      platform_name: 'acme',
      intended_use: 'podcast',
      reason: 'scope_mismatch',
      caller_type: 'api_key',
    });
    expect(auditEntryWords(entry(gate))).toBe('acme asked to synthesize it for podcast: blocked (scope mismatch).');
    const consent = buildAuditRecord('consent.changed', {
      ...base,
      voice_id: base.check_id,
      consent_status: 'withdrawn',
      caller_type: 'user',
    });
    expect(auditEntryWords(entry(consent))).toBe('Synthesis consent is now off: every platform is refused.');
    // A file checked by its credentials, and one whose watermark alone named the voice.
    const verification = (reason: string) =>
      auditEntryWords(
        entry(
          buildAuditRecord('provenance.verification', {
            ...base,
            voice_id: base.check_id,
            platform_name: 'acme',
            reason,
            caller_type: 'anonymous',
          }),
        ),
      );
    expect(verification(`verdict=authorized;authorization=${base.check_id};signer=acme signer;named_by=credentials`)).toBe(
      'Someone checked a file whose Content Credentials name this voice and acme: authorized.',
    );
    expect(verification(`verdict=watermark_authorized;authorization=${base.check_id};signer=none;named_by=watermark`)).toBe(
      'Someone checked a file without Content Credentials whose watermark names this voice and acme: authorized by its watermark.',
    );
    expect(
      verification(`verdict=credentials_watermark_mismatch;authorization=${base.check_id};signer=acme signer;named_by=credentials`),
    ).toBe(
      'Someone checked a file whose Content Credentials name this voice and acme: its Content Credentials and its watermark name different checks.',
    );
    for (const kind of AUDIT_KINDS satisfies AuditKind[]) {
      const action = Object.keys(AUDIT_KIND_RULES[kind].actions)[0] as AuditAction;
      expect(auditEntryWords(entry(buildAuditRecord(kind, { ...base, action, caller_type: 'system' } as never)))).toMatch(/\.$/);
    }
  });
});
