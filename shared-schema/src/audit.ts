import { z } from 'zod';
import { AUDIT_ACTIONS, AUDIT_KINDS } from './audit-kinds.js';
import { canonicalJson, sha256Hex } from './canonical.js';
import { hexDigest, isoTimestamp, uuid } from './common.js';
import { CONSENT_STATUSES, DECISIONS, INTENDED_USES, LICENSE_STATUSES } from './enums.js';

/**
 * The audit chain (docs/CONTRACT.md#audit-chain). A decision is recorded where it is made (the edge for the
 * gate and redemptions, the origin for its own decisions) and appended to one chain at the origin,
 * idempotently by `check_id`. Its kinds and their actions are listed in audit-kinds.ts.
 */
export { AUDIT_KINDS, type AuditKind } from './audit-kinds.js';

/**
 * How an entry's three positions relate, said once here for the API description and the guides
 * (docs/INTEGRATION.md, "Audit log", repeats it in prose).
 */
const SEQ_DESCRIPTION =
  'Position in the chain: consecutive from 1, without gaps, in the order entries were appended (`recorded_at` order). Not the order decisions were made in: see `decided_at`.';
const DECIDED_AT_DESCRIPTION =
  "When the plane that decided made the decision (UTC, milliseconds). The edge's decisions reach the chain a moment later and in batches, so a later `seq` can carry an earlier `decided_at`; read the log with `order=decided_at` for the order decisions were made in.";
const RECORDED_AT_DESCRIPTION =
  'When the origin appended the entry to the chain: never before `decided_at`, and non-decreasing with `seq`.';

/** The orders the audit log can be read in (`order` query parameter); ties in `decided_at` are broken by `seq`. */
export const AUDIT_ORDERS = ['seq', 'decided_at'] as const;
export type AuditOrder = (typeof AUDIT_ORDERS)[number];

export const CALLER_TYPES = ['api_key', 'user', 'anonymous', 'system'] as const;

/**
 * Who caused an audit entry: a platform by its API key, an account, the service itself, or an
 * anonymous caller, known only by a hash of its address (each plane hashes its own way).
 */
export type AuditActor =
  | { type: 'api_key'; keyId: string }
  | { type: 'user'; userId: string }
  | { type: 'system' }
  | { type: 'anonymous'; addressHash: string };

/** An entry's `caller_type` and `caller_id` for `actor`: the one place an actor becomes those two fields. */
export function auditCaller(actor: AuditActor): { caller_type: AuditActor['type']; caller_id: string | null } {
  switch (actor.type) {
    case 'api_key':
      return { caller_type: actor.type, caller_id: actor.keyId };
    case 'user':
      return { caller_type: actor.type, caller_id: actor.userId };
    case 'anonymous':
      return { caller_type: actor.type, caller_id: actor.addressHash };
    case 'system':
      return { caller_type: actor.type, caller_id: null };
  }
}

/** What a plane records about one decision; everything the chain entry holds but its position. */
export const auditRecordSchema = z.object({
  check_id: uuid,
  kind: z.enum(AUDIT_KINDS),
  /**
   * When the decision was made, at the plane that made it: UTC with milliseconds, as `toISOString`
   * writes it, so its text sorts in time order (the log's `order=decided_at` relies on it).
   */
  decided_at: z.iso.datetime({ precision: 3 }).meta({ description: DECIDED_AT_DESCRIPTION }),
  voice_id: uuid.nullable(),
  platform_name: z.string().nullable(),
  intended_use: z.enum(INTENDED_USES).nullable(),
  decision: z.enum(DECISIONS).nullable(),
  action: z.enum(AUDIT_ACTIONS).nullable(),
  reason: z.string().nullable(),
  license_status: z.enum(LICENSE_STATUSES).nullable(),
  consent_status: z.enum(CONSENT_STATUSES).nullable(),
  caller_type: z.enum(CALLER_TYPES),
  /** Key id, user id, or a hash of the client IP for anonymous Variant B calls: never a secret. */
  caller_id: z.string().nullable(),
  token_jti: z.string().nullable(),
  /**
   * On an approval backed by a licence (`gate.decision`, `authorized`) and on a licence's creation or
   * renewal (`license.changed`): the SHA-256 of the licence's canonical terms (license-terms.ts), so
   * the log says under which terms a synthesis was approved. Absent from every other entry, and from
   * entries logged before licences had terms, whose hashes stay as they were.
   */
  license_terms_sha256: hexDigest.optional(),
});
export type AuditRecord = z.infer<typeof auditRecordSchema>;

export const auditEntrySchema = auditRecordSchema
  .extend({
    seq: z.number().int().positive().meta({ description: SEQ_DESCRIPTION }),
    recorded_at: isoTimestamp.meta({ description: RECORDED_AT_DESCRIPTION }),
    prev_hash: hexDigest,
    entry_hash: hexDigest,
  })
  .meta({ id: 'AuditEntry' });
export type AuditEntry = z.infer<typeof auditEntrySchema>;

/** The `prev_hash` of the first entry. */
export const GENESIS_HASH = '0'.repeat(64);

/** The bytes behind entry_hash: prev_hash || canonical_json(entry without entry_hash). */
export function auditEntryPreimage(entry: Omit<AuditEntry, 'entry_hash'> & { entry_hash?: string }): string {
  const { entry_hash: _ignored, ...hashed } = entry;
  return entry.prev_hash + canonicalJson(hashed);
}

/** entry_hash = SHA-256(prev_hash || canonical_json(entry without entry_hash)). */
export async function auditEntryHash(entry: Omit<AuditEntry, 'entry_hash'> & { entry_hash?: string }): Promise<string> {
  return sha256Hex(auditEntryPreimage(entry));
}

/**
 * The entry_hash an entry must carry when it follows an entry whose hash is `prevHash`. Hashing onto
 * the expected predecessor checks the link too: the entry's own prev_hash is among the hashed bytes.
 * A plane may pass a faster hasher than WebCrypto's (Node's synchronous hash) with the same result,
 * over its own form of an entry.
 */
export type ChainHasher<T> = (entry: T, prevHash: string) => string | Promise<string>;

const hashAfter: ChainHasher<AuditEntry> = (entry, prevHash) => auditEntryHash({ ...entry, prev_hash: prevHash });

/** An entry's place in the chain: what the entry after it must follow. */
export interface ChainLink {
  seq: number;
  entry_hash: string;
}

export interface ChainVerdict {
  valid: boolean;
  entries: number;
  head_hash: string;
  first_invalid_seq: number | null;
}

/**
 * Checks a run of entries ordered by `seq`: consecutive numbering, each `prev_hash` equal to the
 * entry before's `entry_hash`, each `entry_hash` recomputed. `previous` is the entry just before
 * the run (null when the run starts the chain).
 */
export function verifyChainSegment(entries: readonly AuditEntry[], previous: ChainLink | null): Promise<ChainVerdict> {
  return verifyChainLinks(entries, previous, hashAfter);
}

/** verifyChainSegment over any form of an entry that a hasher can hash onto its expected predecessor. */
export async function verifyChainLinks<T extends ChainLink>(
  entries: readonly T[],
  previous: ChainLink | null,
  hashEntry: ChainHasher<T>,
): Promise<ChainVerdict> {
  let expectedSeq = previous ? previous.seq + 1 : 1;
  let expectedPrev = previous ? previous.entry_hash : GENESIS_HASH;
  for (const entry of entries) {
    // A synchronous hasher is not awaited: a microtask per entry is a measurable share of verification.
    const computed = entry.seq === expectedSeq ? hashEntry(entry, expectedPrev) : null;
    const intact = computed !== null && (typeof computed === 'string' ? computed : await computed) === entry.entry_hash;
    if (!intact) return { valid: false, entries: entries.length, head_hash: expectedPrev, first_invalid_seq: expectedSeq };
    expectedSeq++;
    expectedPrev = entry.entry_hash;
  }
  return { valid: true, entries: entries.length, head_hash: expectedPrev, first_invalid_seq: null };
}
