import { describe, expect, it } from 'vitest';
import { type AuditEntry, auditCaller, auditEntryHash, CALLER_TYPES, GENESIS_HASH, verifyChainSegment } from './audit.js';

async function chainOf(length: number): Promise<AuditEntry[]> {
  const entries: AuditEntry[] = [];
  let prev = GENESIS_HASH;
  for (let seq = 1; seq <= length; seq++) {
    const body = {
      seq,
      check_id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
      kind: 'gate.decision' as const,
      decided_at: '2026-11-22T10:00:00.000Z',
      recorded_at: '2026-11-22T10:00:01.000Z',
      voice_id: null,
      platform_name: 'acme-tts',
      intended_use: 'podcast' as const,
      decision: 'unresolved' as const,
      action: 'no_registry_record' as const,
      reason: null,
      license_status: 'not_applicable' as const,
      consent_status: 'unknown' as const,
      caller_type: 'api_key' as const,
      caller_id: 'key-1',
      token_jti: null,
      prev_hash: prev,
    };
    const entry = { ...body, entry_hash: await auditEntryHash(body) };
    entries.push(entry);
    prev = entry.entry_hash;
  }
  return entries;
}

describe('audit chain verification', () => {
  it('accepts an intact chain and reports its head', async () => {
    const entries = await chainOf(5);
    expect(await verifyChainSegment(entries, null)).toEqual({
      valid: true,
      entries: 5,
      head_hash: entries[4]!.entry_hash,
      first_invalid_seq: null,
    });
  });

  it('names the first edited entry', async () => {
    const entries = await chainOf(5);
    entries[2] = { ...entries[2]!, decision: 'allow' };
    expect(await verifyChainSegment(entries, null)).toMatchObject({ valid: false, first_invalid_seq: 3 });
  });

  it('catches a deleted, an inserted and a reordered entry', async () => {
    const deleted = await chainOf(5);
    deleted.splice(1, 1);
    expect((await verifyChainSegment(deleted, null)).first_invalid_seq).toBe(2);

    const inserted = await chainOf(5);
    inserted.splice(2, 0, { ...inserted[2]! });
    expect((await verifyChainSegment(inserted, null)).first_invalid_seq).toBe(4);

    const reordered = await chainOf(5);
    [reordered[1], reordered[2]] = [reordered[2]!, reordered[1]!];
    expect((await verifyChainSegment(reordered, null)).first_invalid_seq).toBe(2);
  });

  it('verifies a range that starts after the first entry', async () => {
    const entries = await chainOf(6);
    expect((await verifyChainSegment(entries.slice(3), entries[2]!)).valid).toBe(true);
    expect((await verifyChainSegment(entries.slice(3), entries[1]!)).first_invalid_seq).toBe(3);
  });
});

describe('auditCaller', () => {
  it('names each kind of actor by its own id, the service by none', () => {
    expect(auditCaller({ type: 'api_key', keyId: 'key-1' })).toEqual({ caller_type: 'api_key', caller_id: 'key-1' });
    expect(auditCaller({ type: 'user', userId: 'user-1' })).toEqual({ caller_type: 'user', caller_id: 'user-1' });
    expect(auditCaller({ type: 'anonymous', addressHash: 'ip:ab12' })).toEqual({ caller_type: 'anonymous', caller_id: 'ip:ab12' });
    expect(auditCaller({ type: 'system' })).toEqual({ caller_type: 'system', caller_id: null });
  });

  it('covers every caller type an entry may hold', () => {
    const actors = [
      { type: 'api_key', keyId: 'k' },
      { type: 'user', userId: 'u' },
      { type: 'anonymous', addressHash: 'a' },
      { type: 'system' },
    ] as const;
    expect(actors.map((actor) => auditCaller(actor).caller_type).sort()).toEqual([...CALLER_TYPES].sort());
  });
});
