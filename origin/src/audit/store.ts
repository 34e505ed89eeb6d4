import { type AuditOrder, type AuditRecord, GENESIS_HASH, type HeldAuditRecord } from '@vip/shared-schema';
import { and, asc, desc, eq, getTableColumns, getTableName, gt, gte, inArray, lte, or, type SQL, type SQLWrapper, sql } from 'drizzle-orm';
import { waitForTurn } from '../db/advisory-locks.js';
import type { Executor } from '../db/client.js';
import { auditCheckpoints, auditEntries, auditPending, type CheckpointRow } from '../db/schema.js';
import { voiceIdsOfOwner } from '../voice-records/store.js';
import type { ChainLine, RawChainPage } from './chain-page.js';
import type { StoredEntry } from './entries.js';

/** Holds the chain for the rest of the transaction: appenders in every process take turns. */
export async function lockChain(db: Executor): Promise<void> {
  await waitForTurn(db, 'chainAppend');
}

export async function lockCollector(db: Executor): Promise<void> {
  await waitForTurn(db, 'auditCollection');
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

export async function insertEntries(db: Executor, entries: StoredEntry[]): Promise<void> {
  if (entries.length > 0) await db.insert(auditEntries).values(entries);
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
  /** Bounds on the order's time (`recorded_at` for seq order, `decided_at` for decided_at order), inclusive. */
  from?: Date;
  to?: Date;
}

/** Where a page starts: after this entry, in the order it was read in. */
export type AuditPosition = { order: 'seq'; seq: number } | { order: 'decided_at'; decidedAt: string; seq: number };

/** Where the fields visibility depends on are read: a chained entry's columns, or a queued record's JSON. */
interface VisibilityFields {
  voiceId: SQLWrapper;
  platformName: SQLWrapper;
  callerType: SQLWrapper;
  callerId: SQLWrapper;
}

const entryVisibilityFields: VisibilityFields = auditEntries;
const pendingField = (field: keyof AuditRecord) => sql`(${auditPending.record} ->> ${field})`;
const pendingVisibilityFields: VisibilityFields = {
  voiceId: sql`${pendingField('voice_id')}::uuid`,
  platformName: pendingField('platform_name'),
  callerType: pendingField('caller_type'),
  callerId: pendingField('caller_id'),
};

function visibleTo(reader: AuditReader, fields: VisibilityFields = entryVisibilityFields): SQL | undefined {
  if (reader.kind === 'admin') return undefined;
  if (reader.kind === 'platform') return eq(fields.platformName, reader.platformName);
  // The owner's existing voices; a deleted voice's entries stay in the chain but only admins see them.
  const ownVoices = sql`${fields.voiceId} in (${voiceIdsOfOwner(reader.userId)})`;
  return or(ownVoices, and(eq(fields.callerType, 'user'), eq(fields.callerId, reader.userId)));
}

/** Whether `checkId` waits in the queue as a record `reader` will see once it is chained. */
export async function pendingVisibleTo(db: Executor, reader: AuditReader, checkId: string): Promise<boolean> {
  const rows = await db
    .select({ checkId: auditPending.checkId })
    .from(auditPending)
    .where(and(eq(auditPending.checkId, checkId), visibleTo(reader, pendingVisibilityFields)));
  return rows.length > 0;
}

/** Whether `reader` will see the record the edge holds (and the chain will hold) once it is collected. */
export async function heldRecordVisibleTo(db: Executor, reader: AuditReader, held: HeldAuditRecord): Promise<boolean> {
  const visible = visibleTo(reader, {
    voiceId: sql`${held.voice_id}::uuid`,
    platformName: sql`${held.platform_name}::text`,
    callerType: sql`${held.caller_type}::text`,
    callerId: sql`${held.caller_id}::text`,
  });
  if (!visible) return true;
  // Both drivers answer a raw query with { rows }.
  const { rows } = (await db.execute(sql`select coalesce(${visible}, false) as visible`)) as unknown as { rows: { visible: boolean }[] };
  return rows[0]?.visible === true;
}

const storedFields = { seq: auditEntries.seq, entryJson: auditEntries.entryJson, entryHash: auditEntries.entryHash };

export function listEntries(
  db: Executor,
  reader: AuditReader,
  filter: AuditFilter,
  order: AuditOrder,
  after: AuditPosition | undefined,
  limit: number,
): Promise<(StoredEntry & { seq: number; decidedAt: string })[]> {
  // Both times are ISO text of one fixed form, which sorts in time order.
  const time = order === 'seq' ? auditEntries.recordedAt : auditEntries.decidedAt;
  const conditions = [
    visibleTo(reader),
    filter.checkId ? eq(auditEntries.checkId, filter.checkId) : undefined,
    filter.voiceId ? eq(auditEntries.voiceId, filter.voiceId) : undefined,
    filter.platformName ? eq(auditEntries.platformName, filter.platformName) : undefined,
    filter.decision ? eq(auditEntries.decision, filter.decision) : undefined,
    filter.from ? gte(time, filter.from.toISOString()) : undefined,
    filter.to ? lte(time, filter.to.toISOString()) : undefined,
    after === undefined
      ? undefined
      : after.order === 'seq'
        ? gt(auditEntries.seq, after.seq)
        : sql`(${auditEntries.decidedAt}, ${auditEntries.seq}) > (${after.decidedAt}, ${after.seq})`,
  ];
  return db
    .select({ ...storedFields, decidedAt: auditEntries.decidedAt })
    .from(auditEntries)
    .where(and(...conditions))
    .orderBy(...(order === 'seq' ? [asc(auditEntries.seq)] : [asc(auditEntries.decidedAt), asc(auditEntries.seq)]))
    .limit(limit);
}

/**
 * A verification page: the entries with `fromSeq <= seq <= toSeq`. Bounded on both sides, a page
 * reads only its own rows (with no upper bound near it, a planner without statistics, as on PGlite,
 * sorts every row from `fromSeq` on for each page). The rows come back as one text (RawChainPage):
 * PGlite copies each returned field into a buffer of its own, so one field per page is most of the
 * speed, and the database does not sort them (linesOfPage places each by its seq).
 */
export async function readChainPage(db: Executor, fromSeq: number, toSeq: number): Promise<RawChainPage> {
  const [page] = await db
    .select({
      rows: sql<number>`count(*)::int`,
      text: sql<string | null>`string_agg(${auditEntries.entryHash} || ${auditEntries.seq}::text || ${auditEntries.entryJson}, chr(30))`,
    })
    .from(auditEntries)
    .where(and(gte(auditEntries.seq, fromSeq), lte(auditEntries.seq, toSeq)));
  return { fromSeq, toSeq, rows: Number(page?.rows ?? 0), text: page?.text ?? null };
}

/** The same entries row by row, in seq order: for a page whose text does not match its rows. */
export async function chainRows(db: Executor, fromSeq: number, toSeq: number): Promise<ChainLine[]> {
  const rows = await db
    .select(storedFields)
    .from(auditEntries)
    .where(and(gte(auditEntries.seq, fromSeq), lte(auditEntries.seq, toSeq)))
    .orderBy(asc(auditEntries.seq));
  return rows.map(({ seq, entryHash, entryJson }) => ({ seq, entry_hash: entryHash, entryJson }));
}

const DERIVED_COLUMNS = Object.values(getTableColumns(auditEntries))
  .filter((column) => column.generated)
  .map((column) => column.name);

/**
 * The derived columns that no longer derive from their own field of entry_json: an ALTER TABLE
 * (DROP or SET EXPRESSION) would let them be set apart from the entries, and then a filter could
 * miss or misfile entries whose JSON, and so whose hashes, are intact. Postgres prints the
 * expression with its own parentheses and casts, so the check allows those and nothing else.
 */
export async function detachedDerivedColumns(db: Executor): Promise<string[]> {
  // Both drivers answer a raw query with { rows }.
  const { rows } = (await db.execute(sql`
    select a.attname as name, case when a.attgenerated = 's' then pg_get_expr(d.adbin, d.adrelid) end as expression
    from pg_attribute a left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    where a.attrelid = ${getTableName(auditEntries)}::regclass and not a.attisdropped`)) as unknown as {
    rows: { name: string; expression: string | null }[];
  };
  const expressions = new Map(rows.map((row) => [row.name, row.expression]));
  return DERIVED_COLUMNS.filter((name) => !derivesFrom(expressions.get(name), name));
}

const derivesFrom = (expression: string | null | undefined, field: string) =>
  expression != null && new RegExp(`^\\(*\\(entry_json\\)::jsonb ->> '${field}'::text\\)+(::(bigint|uuid))?$`).test(expression);

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

export async function entryHashAt(db: Executor, seq: number): Promise<string | null> {
  const [row] = await db.select({ entryHash: auditEntries.entryHash }).from(auditEntries).where(eq(auditEntries.seq, seq));
  return row?.entryHash ?? null;
}

export async function insertCheckpoint(db: Executor, checkpoint: typeof auditCheckpoints.$inferInsert): Promise<void> {
  await db.insert(auditCheckpoints).values(checkpoint).onConflictDoNothing({ target: auditCheckpoints.treeSize });
}

export function latestCheckpoints(db: Executor, limit: number): Promise<CheckpointRow[]> {
  return db.select().from(auditCheckpoints).orderBy(desc(auditCheckpoints.treeSize)).limit(limit);
}

/**
 * The chained entry of `kind` that allowed the token `tokenJti` for the voice (its canonical JSON, as
 * the chain hashes it); null while it is still queued or when none exists.
 */
async function allowingEntryOfToken(
  db: Executor,
  kind: 'gate.decision' | 'authorization.redeemed',
  voiceId: string,
  tokenJti: string,
): Promise<string | null> {
  const [row] = await db
    .select({ entryJson: auditEntries.entryJson })
    .from(auditEntries)
    .where(
      and(
        eq(auditEntries.voiceId, voiceId),
        eq(auditEntries.decision, 'allow'),
        sql`(${auditEntries.entryJson}::jsonb ->> 'kind') = ${kind}`,
        sql`(${auditEntries.entryJson}::jsonb ->> 'token_jti') = ${tokenJti}`,
      ),
    )
    .limit(1);
  return row?.entryJson ?? null;
}

/** Whether the token a gate decision issued was redeemed: its `authorization.redeemed` entry that allowed it. */
export async function redemptionLogged(db: Executor, voiceId: string, tokenJti: string): Promise<boolean> {
  return (await allowingEntryOfToken(db, 'authorization.redeemed', voiceId, tokenJti)) !== null;
}

/** The approval whose token a redemption redeemed: the chained `gate.decision` entry that allowed it. */
export const approvalOfToken = (db: Executor, voiceId: string, tokenJti: string): Promise<string | null> =>
  allowingEntryOfToken(db, 'gate.decision', voiceId, tokenJti);
