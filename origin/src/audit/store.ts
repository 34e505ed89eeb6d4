import { type AuditEntry, type AuditRecord, GENESIS_HASH } from '@vip/shared-schema';
import { and, asc, desc, eq, gt, gte, inArray, lte, or, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { auditCheckpoints, auditEntries, auditPending, voices } from '../db/schema.js';
import type { AuditEntryRow } from './entries.js';

/** Advisory lock keys: any constants, the same in every origin process. */
const CHAIN_LOCK_KEY = 6_170_001;
/** Serialises collectors (several origin processes) so a deny's event is emitted once per check_id. */
const COLLECTOR_LOCK_KEY = 6_170_002;

/** Holds the chain for the rest of the transaction: appenders in every process take turns. */
export async function lockChain(db: Executor): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(${sql.raw(String(CHAIN_LOCK_KEY))})`);
}

export async function lockCollector(db: Executor): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(${sql.raw(String(COLLECTOR_LOCK_KEY))})`);
}

export interface ChainHead {
  seq: number;
  entryHash: string;
}

export async function chainHead(db: Executor): Promise<ChainHead> {
  const [row] = await db
    .select({ seq: auditEntries.seq, entryHash: auditEntries.entryHash })
    .from(auditEntries)
    .orderBy(desc(auditEntries.seq))
    .limit(1);
  return row ?? { seq: 0, entryHash: GENESIS_HASH };
}

export async function oldestPending(db: Executor, limit: number): Promise<{ checkId: string; record: AuditRecord }[]> {
  const rows = await db
    .select({ checkId: auditPending.checkId, record: auditPending.record })
    .from(auditPending)
    .orderBy(asc(auditPending.receivedAt), asc(auditPending.checkId))
    .limit(limit);
  return rows.map((row) => ({ checkId: row.checkId, record: row.record as AuditRecord }));
}

/** Of these check_ids, the ones queued or already chained. */
export async function knownCheckIds(db: Executor, checkIds: readonly string[]): Promise<Set<string>> {
  if (checkIds.length === 0) return new Set();
  const rows = await db
    .select({ checkId: auditPending.checkId })
    .from(auditPending)
    .where(inArray(auditPending.checkId, [...checkIds]))
    .union(
      db
        .select({ checkId: auditEntries.checkId })
        .from(auditEntries)
        .where(inArray(auditEntries.checkId, [...checkIds])),
    );
  return new Set(rows.map((row) => row.checkId));
}

export async function chainedCheckIds(db: Executor, checkIds: readonly string[]): Promise<Set<string>> {
  if (checkIds.length === 0) return new Set();
  const rows = await db
    .select({ checkId: auditEntries.checkId })
    .from(auditEntries)
    .where(inArray(auditEntries.checkId, [...checkIds]));
  return new Set(rows.map((row) => row.checkId));
}

export async function insertEntries(db: Executor, rows: AuditEntryRow[]): Promise<void> {
  if (rows.length > 0) await db.insert(auditEntries).values(rows);
}

export async function deletePending(db: Executor, checkIds: readonly string[]): Promise<void> {
  if (checkIds.length > 0) await db.delete(auditPending).where(inArray(auditPending.checkId, [...checkIds]));
}

/** Who reads the log, and so which entries they may see. */
export type AuditReader = { kind: 'admin' } | { kind: 'owner'; userId: string } | { kind: 'platform'; platformName: string };

export interface AuditFilter {
  checkId?: string;
  voiceId?: string;
  platformName?: string;
  decision?: string;
  from?: Date;
  to?: Date;
  afterSeq?: number;
}

function visibleTo(reader: AuditReader): SQL | undefined {
  if (reader.kind === 'admin') return undefined;
  if (reader.kind === 'platform') return eq(auditEntries.platformName, reader.platformName);
  // The owner's existing voices; a deleted voice's entries stay in the chain but only admins see them.
  const ownVoices = sql`${auditEntries.voiceId} in (select ${voices.id} from ${voices} where ${voices.ownerId} = ${reader.userId})`;
  return or(ownVoices, and(eq(auditEntries.callerType, 'user'), eq(auditEntries.callerId, reader.userId)));
}

export function listEntries(db: Executor, reader: AuditReader, filter: AuditFilter, limit: number): Promise<AuditEntryRow[]> {
  const conditions = [
    visibleTo(reader),
    filter.checkId ? eq(auditEntries.checkId, filter.checkId) : undefined,
    filter.voiceId ? eq(auditEntries.voiceId, filter.voiceId) : undefined,
    filter.platformName ? eq(auditEntries.platformName, filter.platformName) : undefined,
    filter.decision ? eq(auditEntries.decision, filter.decision) : undefined,
    filter.from ? gte(auditEntries.recordedAt, filter.from) : undefined,
    filter.to ? lte(auditEntries.recordedAt, filter.to) : undefined,
    filter.afterSeq !== undefined ? gt(auditEntries.seq, filter.afterSeq) : undefined,
  ];
  return db
    .select()
    .from(auditEntries)
    .where(and(...conditions))
    .orderBy(asc(auditEntries.seq))
    .limit(limit);
}

/**
 * The entries with `fromSeq <= seq <= toSeq`, in seq order, as verification reads them: a page.
 * Bounded on both sides, a page reads only its own rows (with no upper bound near it, a planner
 * without statistics, as on PGlite, sorts every row from `fromSeq` on for each page). The rows come
 * back as one JSON text of text arrays, which carries any text exactly: PGlite copies each returned
 * field into a buffer of its own, so one field per page instead of eighteen per row is most of the speed.
 */
export async function entriesBetween(db: Executor, fromSeq: number, toSeq: number): Promise<AuditEntry[]> {
  const fields = sql.join(
    PAGE_FIELDS.map(([, read]) => read),
    sql`, `,
  );
  const [result] = await db
    .select({ page: sql<string | null>`json_agg(array[${fields}] order by ${auditEntries.seq})::text` })
    .from(auditEntries)
    .where(and(gte(auditEntries.seq, fromSeq), lte(auditEntries.seq, toSeq)));
  const rows = JSON.parse(result?.page ?? '[]') as (string | null)[][];
  return rows.map((row) => {
    const entry: Record<string, unknown> = {};
    for (let i = 0; i < PAGE_FIELDS.length; i++) entry[PAGE_FIELDS[i]![0]] = row[i];
    entry.seq = Number(entry.seq);
    entry.recorded_at = isoTime(row[RECORDED_AT_INDEX]);
    return entry as AuditEntry;
  });
}

/**
 * Each entry field and how a page reads it, as text. recorded_at travels as epoch seconds, so its
 * ISO form is still written by JS (toISOString), as when the entry was hashed.
 */
const PAGE_FIELDS: [keyof AuditEntry, SQL][] = [
  ['check_id', sql`${auditEntries.checkId}::text`],
  ['kind', sql`${auditEntries.kind}`],
  ['decided_at', sql`${auditEntries.decidedAt}`],
  ['voice_id', sql`${auditEntries.voiceId}::text`],
  ['platform_name', sql`${auditEntries.platformName}`],
  ['intended_use', sql`${auditEntries.intendedUse}`],
  ['decision', sql`${auditEntries.decision}`],
  ['action', sql`${auditEntries.action}`],
  ['reason', sql`${auditEntries.reason}`],
  ['license_status', sql`${auditEntries.licenseStatus}`],
  ['consent_status', sql`${auditEntries.consentStatus}`],
  ['caller_type', sql`${auditEntries.callerType}`],
  ['caller_id', sql`${auditEntries.callerId}`],
  ['token_jti', sql`${auditEntries.tokenJti}`],
  ['seq', sql`${auditEntries.seq}::text`],
  ['recorded_at', sql`date_part('epoch', ${auditEntries.recordedAt})::text`],
  ['prev_hash', sql`${auditEntries.prevHash}`],
  ['entry_hash', sql`${auditEntries.entryHash}`],
];
const RECORDED_AT_INDEX = PAGE_FIELDS.findIndex(([field]) => field === 'recorded_at');

/** The ISO form JS hashed; a tampered value no Date can hold (`infinity`) stays as read, so it fails the hash instead of throwing. */
function isoTime(epochSeconds: string | null | undefined): string {
  const ms = Math.round(Number(epochSeconds) * 1000);
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? new Date(ms).toISOString() : String(epochSeconds);
}

/** The lowest seq above `afterSeq` and at most `toSeq`, or null: where reading resumes after a gap. */
export async function firstSeqAfter(db: Executor, afterSeq: number, toSeq: number): Promise<number | null> {
  const [row] = await db
    .select({ seq: auditEntries.seq })
    .from(auditEntries)
    .where(and(gt(auditEntries.seq, afterSeq), lte(auditEntries.seq, toSeq)))
    .orderBy(asc(auditEntries.seq))
    .limit(1);
  return row?.seq ?? null;
}

export async function entryAt(db: Executor, seq: number): Promise<AuditEntryRow | null> {
  const [row] = await db.select().from(auditEntries).where(eq(auditEntries.seq, seq));
  return row ?? null;
}

export type CheckpointRow = typeof auditCheckpoints.$inferSelect;

export async function insertCheckpoint(db: Executor, checkpoint: typeof auditCheckpoints.$inferInsert): Promise<void> {
  await db.insert(auditCheckpoints).values(checkpoint).onConflictDoNothing({ target: auditCheckpoints.treeSize });
}

export function latestCheckpoints(db: Executor, limit: number): Promise<CheckpointRow[]> {
  return db.select().from(auditCheckpoints).orderBy(desc(auditCheckpoints.treeSize)).limit(limit);
}
