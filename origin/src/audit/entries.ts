import { hash } from 'node:crypto';
import { type AuditEntry, type AuditRecord, auditEntryPreimage } from '@vip/shared-schema';
import type { auditEntries } from '../db/schema.js';

export type AuditEntryRow = typeof auditEntries.$inferSelect;

/** Every hashed key of an entry, in canonical (sorted) order, each with its `"key":` prefix. */
const HASHED_KEYS = [
  'action',
  'caller_id',
  'caller_type',
  'check_id',
  'consent_status',
  'decided_at',
  'decision',
  'intended_use',
  'kind',
  'license_status',
  'platform_name',
  'prev_hash',
  'reason',
  'recorded_at',
  'seq',
  'token_jti',
  'voice_id',
] as const;
const KEY_PREFIXES = HASHED_KEYS.map((key, index) => `${index === 0 ? '{' : ','}${JSON.stringify(key)}:`);

/**
 * shared-schema's auditEntryPreimage for an entry with exactly the hashed keys, without the generic
 * sort: verification runs hundreds of thousands of these. Values go through JSON.stringify, as in
 * canonicalJson, so the bytes are the same (a test holds the two together); any other shape takes
 * the generic path.
 */
function entryPreimage(entry: Omit<AuditEntry, 'entry_hash'> & { entry_hash?: string }): string {
  const keys = Object.keys(entry).length - (entry.entry_hash === undefined ? 0 : 1);
  if (keys !== HASHED_KEYS.length) return auditEntryPreimage(entry);
  let json = '';
  for (let i = 0; i < HASHED_KEYS.length; i++) {
    const value = entry[HASHED_KEYS[i]!];
    if (value === undefined) return auditEntryPreimage(entry);
    json += KEY_PREFIXES[i] + (value === null ? 'null' : JSON.stringify(value));
  }
  return `${entry.prev_hash}${json}}`;
}

/** Same result as shared-schema's auditEntryHash, synchronously, with Node's one-shot SHA-256 (no Hash object per entry). */
export const hashAuditEntry = (entry: Omit<AuditEntry, 'entry_hash'>): string => hash('sha256', entryPreimage(entry), 'hex');

/** Postgres hands uuids back lower-case; the hashed entry must hold what the table will return. */
const lowerUuid = (value: string | null) => value?.toLowerCase() ?? null;

/** The chain entry a record becomes at `seq`, hashed onto `prevHash`. */
export function chainEntry(record: AuditRecord, seq: number, recordedAt: Date, prevHash: string): AuditEntry {
  const entry: Omit<AuditEntry, 'entry_hash'> = {
    check_id: record.check_id.toLowerCase(),
    kind: record.kind,
    decided_at: record.decided_at,
    voice_id: lowerUuid(record.voice_id),
    platform_name: record.platform_name,
    intended_use: record.intended_use,
    decision: record.decision,
    action: record.action,
    reason: record.reason,
    license_status: record.license_status,
    consent_status: record.consent_status,
    caller_type: record.caller_type,
    caller_id: record.caller_id,
    token_jti: record.token_jti,
    seq,
    recorded_at: recordedAt.toISOString(),
    prev_hash: prevHash,
  };
  return { ...entry, entry_hash: hashAuditEntry(entry) };
}

export function entryToRow(entry: AuditEntry): AuditEntryRow {
  return {
    seq: entry.seq,
    checkId: entry.check_id,
    kind: entry.kind,
    decidedAt: entry.decided_at,
    recordedAt: new Date(entry.recorded_at),
    voiceId: entry.voice_id,
    platformName: entry.platform_name,
    intendedUse: entry.intended_use,
    decision: entry.decision,
    action: entry.action,
    reason: entry.reason,
    licenseStatus: entry.license_status,
    consentStatus: entry.consent_status,
    callerType: entry.caller_type,
    callerId: entry.caller_id,
    tokenJti: entry.token_jti,
    prevHash: entry.prev_hash,
    entryHash: entry.entry_hash,
  };
}

/** The entry as the table holds it; the enum columns are read as written, so a tampered value still hashes (and fails). */
export function rowToEntry(row: AuditEntryRow): AuditEntry {
  return {
    check_id: row.checkId,
    kind: row.kind,
    decided_at: row.decidedAt,
    voice_id: row.voiceId,
    platform_name: row.platformName,
    intended_use: row.intendedUse,
    decision: row.decision,
    action: row.action,
    reason: row.reason,
    license_status: row.licenseStatus,
    consent_status: row.consentStatus,
    caller_type: row.callerType,
    caller_id: row.callerId,
    token_jti: row.tokenJti,
    seq: row.seq,
    recorded_at: row.recordedAt.toISOString(),
    prev_hash: row.prevHash,
    entry_hash: row.entryHash,
  } as AuditEntry;
}
