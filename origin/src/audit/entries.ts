import { hash } from 'node:crypto';
import { type AuditEntry, type AuditRecord, canonicalJson } from '@vip/shared-schema';

/**
 * entry_hash = SHA-256(prev_hash || canonical JSON), synchronously, with Node's one-shot SHA-256 (no
 * Hash object per entry): shared-schema's auditEntryHash over an entry as the chain stores it.
 */
export const hashStoredEntry = (prevHash: string, entryJson: string): string => hash('sha256', prevHash + entryJson, 'hex');

/**
 * A chain entry as the table holds it: the canonical JSON of the entry without entry_hash (the
 * bytes hashed after prev_hash, so nothing is re-serialised to verify it) and the hash.
 */
export interface StoredEntry {
  entryJson: string;
  entryHash: string;
}

/** Uuids are hashed lower-case, as Postgres writes them, so the entry and the uuid columns derived from it agree. */
const lowerUuid = (value: string | null) => value?.toLowerCase() ?? null;

/** The chain entry a record becomes at `seq`, hashed onto `prevHash`. */
export function chainEntry(record: AuditRecord, seq: number, recordedAt: Date, prevHash: string): StoredEntry {
  const entryJson = canonicalJson({
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
    // Undefined (left out of the canonical JSON) on every entry that names no licence terms.
    license_terms_sha256: record.license_terms_sha256,
    seq,
    recorded_at: recordedAt.toISOString(),
    prev_hash: prevHash,
  });
  return { entryJson, entryHash: hashStoredEntry(prevHash, entryJson) };
}

/** The entry as the API serves it: the stored JSON, whose fields the hash covers, and its hash. */
export function storedToEntry(stored: StoredEntry): AuditEntry {
  return { ...JSON.parse(stored.entryJson), entry_hash: stored.entryHash };
}
