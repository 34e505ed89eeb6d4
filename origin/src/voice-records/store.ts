/**
 * The voices, their embeddings, their review holds and disputes: the rows and every query of them, below the
 * domains (docs/ARCHITECTURE.md, "The origin's folders"). The voices domain enrolls, reviews and
 * erases through them; the registry, licence requests, screening, detection, provenance, spoken
 * consent, the audit's owner filter and the edge link read and lock them here, so none of them leans
 * on the voices domain, which sits above them all.
 */
import type { ConsentStatus, DisputeStatus, VoiceStatus } from '@vip/shared-schema';
import { and, asc, desc, eq, getTableColumns, gt, inArray, ne, type SQL, sql } from 'drizzle-orm';
import { alias } from 'drizzle-orm/pg-core';
import type { Executor } from '../db/client.js';
import { DatabaseUnavailableError, databaseFailure } from '../db/errors.js';
import { type VoiceDisputeRow, type VoiceRow, voiceDisputes, voiceEmbeddings, voiceReviews, voices } from '../db/schema.js';
import { olderThan, type TimeCursor } from '../http/cursor.js';

export interface StoredEmbedding {
  embedding: Float32Array;
  model: string;
}

export async function insertVoice(db: Executor, voice: typeof voices.$inferInsert): Promise<VoiceRow> {
  const [row] = await db.insert(voices).values(voice).returning();
  return row!;
}

/** Newest first; `after` is the last row of the previous page. */
export function listVoicesOfOwner(db: Executor, ownerId: string, limit: number, after: TimeCursor | null) {
  return db
    .select()
    .from(voices)
    .where(and(eq(voices.ownerId, ownerId), olderThan(voices.createdAt, voices.id, after)))
    .orderBy(desc(voices.createdAt), desc(voices.id))
    .limit(limit);
}

export async function findVoice(db: Executor, voiceId: string): Promise<VoiceRow | null> {
  const [row] = await db.select().from(voices).where(eq(voices.id, voiceId));
  return row ?? null;
}

/**
 * Locks the voice's row for the rest of the transaction: every change that publishes a voice takes
 * this lock first, so its outbox row (the version) is written in commit order.
 */
export async function lockVoice(db: Executor, voiceId: string): Promise<VoiceRow | null> {
  const [row] = await db.select().from(voices).where(eq(voices.id, voiceId)).for('update');
  return row ?? null;
}

/** The ids of the owner's voices, as a subquery for `in (…)`. */
/** Voice ids in id order after `afterId` (from the start when null), `limit` of them: every voice, page by page. */
export async function voiceIdsAfter(db: Executor, afterId: string | null, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: voices.id })
    .from(voices)
    .where(afterId === null ? undefined : gt(voices.id, afterId))
    .orderBy(asc(voices.id))
    .limit(limit);
  return rows.map((row) => row.id);
}

export const voiceIdsOfOwner = (ownerId: string): SQL => sql`select ${voices.id} from ${voices} where ${voices.ownerId} = ${ownerId}`;

export async function findVoiceOfOwner(db: Executor, ownerId: string, voiceId: string): Promise<VoiceRow | null> {
  const [row] = await db
    .select()
    .from(voices)
    .where(and(eq(voices.id, voiceId), eq(voices.ownerId, ownerId)));
  return row ?? null;
}

/** The owner of each voice in `voiceIds` that exists, by voice id; other domains read owners here. */
export async function ownersOfVoices(db: Executor, voiceIds: readonly string[]): Promise<Map<string, string>> {
  if (voiceIds.length === 0) return new Map();
  const rows = await db
    .select({ voiceId: voices.id, ownerId: voices.ownerId })
    .from(voices)
    .where(inArray(voices.id, [...voiceIds]));
  return new Map(rows.map((row) => [row.voiceId, row.ownerId]));
}

/** Licences go with the voice row (ON DELETE CASCADE); count them first for the receipt. */
export async function deleteVoice(db: Executor, voiceId: string): Promise<void> {
  await db.delete(voices).where(eq(voices.id, voiceId));
}

/**
 * Enrollments of one model take turns (transaction-scoped advisory lock), so two owners enrolling
 * the same speaker at the same moment cannot both miss each other in the 1:N search.
 */
export async function serializeEnrollments(db: Executor, model: string): Promise<void> {
  await db.execute(sql`select pg_advisory_xact_lock(hashtext(${`voice-enrollment:${model}`}))`);
}

export async function insertEmbedding(db: Executor, row: { voiceId: string; ownerId: string; model: string; embedding: Float32Array }) {
  await withoutVectorsInErrors(() =>
    db
      .insert(voiceEmbeddings)
      .values({ voiceId: row.voiceId, ownerId: row.ownerId, model: row.model, embedding: toVectorLiteral(row.embedding) }),
  );
}

/** A new voiceprint for an enrolled voice (re-enrollment): the voice row's model and summary follow it. */
export async function replaceVoiceprint(
  db: Executor,
  voiceId: string,
  change: Pick<VoiceRow, 'status' | 'model' | 'speechSeconds' | 'quality' | 'updatedAt'> & { embedding: Float32Array },
): Promise<VoiceRow> {
  const { embedding, ...voice } = change;
  const [row] = await db.update(voices).set(voice).where(eq(voices.id, voiceId)).returning();
  await withoutVectorsInErrors(() =>
    db
      .update(voiceEmbeddings)
      .set({ model: change.model, embedding: toVectorLiteral(embedding) })
      .where(eq(voiceEmbeddings.voiceId, voiceId)),
  );
  return row!;
}

export interface NearVoice {
  voiceId: string;
  ownerId: string;
  similarity: number;
  speechSeconds: number;
  status: VoiceRow['status'];
}

/**
 * The `k` most similar enrolled voices under the same model, best first, not counting
 * `excludeOwnerId`'s (the 1:N identity search of enrollment; detection and screening pass null): an
 * HNSW scan of the model's partial index (migration 0005), which is used only when the query repeats
 * its expression, `embedding::vector(dim)`, and names the model as a literal. Approximate, like every
 * HNSW search. The owner filter applies to what the index hands back, so without pgvector's iterative
 * scan (0.8+) an owner with more than ef_search voices near the probe would hide everyone else's.
 * Call it inside a transaction: the setting is transaction-local.
 */
export async function nearestVoices(tx: Executor, probe: StoredEmbedding, excludeOwnerId: string | null, k: number): Promise<NearVoice[]> {
  await tx.execute(sql`set local hnsw.iterative_scan = strict_order`);
  const rows = await withoutVectorsInErrors(() => nearestVoiceQuery(tx, probe, excludeOwnerId, k));
  if (rows.length === 0) return [];
  // Read apart from the search, whose plan must stay a scan of the embeddings' HNSW index.
  const details = await tx
    .select({ id: voices.id, speechSeconds: voices.speechSeconds, status: voices.status })
    .from(voices)
    .where(
      inArray(
        voices.id,
        rows.map((row) => row.voiceId),
      ),
    );
  const byId = new Map(details.map((voice) => [voice.id, voice]));
  return rows.flatMap((row) => {
    const voice = byId.get(row.voiceId);
    return voice
      ? [
          {
            voiceId: row.voiceId,
            ownerId: row.ownerId,
            similarity: Number(row.similarity),
            speechSeconds: voice.speechSeconds,
            status: voice.status,
          },
        ]
      : [];
  });
}

/** The most similar enrolled voice (nearestVoices with k = 1), or null when none is enrolled under the model. */
export async function nearestVoice(tx: Executor, probe: StoredEmbedding, excludeOwnerId: string | null): Promise<NearVoice | null> {
  const [nearest] = await nearestVoices(tx, probe, excludeOwnerId, 1);
  return nearest ?? null;
}

/** The statement alone, so a test can EXPLAIN it. */
export function nearestVoiceQuery(db: Executor, probe: StoredEmbedding, excludeOwnerId: string | null, k = 1) {
  const vectorType = sql.raw(`vector(${probe.embedding.length})`);
  const distance = sql`(${voiceEmbeddings.embedding}::${vectorType}) <=> ${toVectorLiteral(probe.embedding)}::${vectorType}`;
  return db
    .select({ voiceId: voiceEmbeddings.voiceId, ownerId: voiceEmbeddings.ownerId, similarity: sql<number>`1 - (${distance})` })
    .from(voiceEmbeddings)
    .where(
      and(
        sql`${voiceEmbeddings.model} = ${sql.raw(modelLiteral(probe.model))}`,
        excludeOwnerId === null ? undefined : ne(voiceEmbeddings.ownerId, excludeOwnerId),
      ),
    )
    .orderBy(distance)
    .limit(k);
}

export async function findEmbeddingOfVoice(db: Executor, voiceId: string): Promise<StoredEmbedding | null> {
  const [row] = await withoutVectorsInErrors(() =>
    db
      .select({ model: voiceEmbeddings.model, text: sql<string>`${voiceEmbeddings.embedding}::text` })
      .from(voiceEmbeddings)
      .where(eq(voiceEmbeddings.voiceId, voiceId)),
  );
  return row ? { model: row.model, embedding: parseVectorText(row.text) } : null;
}

export async function deleteEmbeddingsOfVoice(db: Executor, voiceId: string): Promise<number> {
  const rows = await db.delete(voiceEmbeddings).where(eq(voiceEmbeddings.voiceId, voiceId)).returning({ id: voiceEmbeddings.voiceId });
  return rows.length;
}

/** pgvector stores float4 and prints the shortest text that reads back to the same float4. */
const toVectorLiteral = (embedding: Float32Array): string => `[${Array.from(embedding).join(',')}]`;
const parseVectorText = (text: string): Float32Array => Float32Array.from(text.slice(1, -1).split(','), Number);

/** Model names come from the manifest, but are quoted into SQL (for the partial index), so they are checked. */
function modelLiteral(model: string): string {
  if (!/^[A-Za-z0-9._-]+$/.test(model)) throw new Error(`unexpected model name ${JSON.stringify(model)}`);
  return `'${model}'`;
}

/**
 * Drizzle's query errors quote the statement's parameters, and an error that reaches the error
 * handler is logged: a voiceprint must not end up in a log, so only the database's error code goes on.
 */
async function withoutVectorsInErrors<T>(query: () => PromiseLike<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    const failure = databaseFailure(error);
    if (failure) throw new DatabaseUnavailableError(undefined, { reason: failure });
    const cause = (error as { cause?: { code?: unknown } }).cause ?? error;
    const code = (cause as { code?: unknown }).code;
    throw new Error(`A voice embedding query failed (database code ${typeof code === 'string' ? code : 'unknown'}).`);
  }
}

export async function insertReview(db: Executor, review: typeof voiceReviews.$inferInsert): Promise<void> {
  await db.insert(voiceReviews).values(review);
}

export async function deleteReview(db: Executor, voiceId: string): Promise<void> {
  await db.delete(voiceReviews).where(eq(voiceReviews.voiceId, voiceId));
}

export async function setVoiceStatus(db: Executor, voiceId: string, status: VoiceStatus, now: Date): Promise<void> {
  await db.update(voices).set({ status, updatedAt: now }).where(eq(voices.id, voiceId));
}

/** The synthesis consent is the registry's to give; it is kept on the voice's row. */
export async function setConsentStatus(db: Executor, voiceId: string, status: ConsentStatus, now: Date): Promise<void> {
  await db.update(voices).set({ consentStatus: status, updatedAt: now }).where(eq(voices.id, voiceId));
}

/** The other owner's voice a held voice resembles, while it still exists. */
export async function findMatchedVoice(db: Executor, heldVoiceId: string): Promise<{ voiceId: string; ownerId: string } | null> {
  const [row] = await db
    .select({ voiceId: voices.id, ownerId: voices.ownerId })
    .from(voiceReviews)
    .innerJoin(voices, eq(voices.id, voiceReviews.matchedVoiceId))
    .where(eq(voiceReviews.voiceId, heldVoiceId));
  return row ?? null;
}

const matchedVoices = alias(voices, 'matched_voices');

/** Held voices, oldest first (the review queue); `after` is the last row of the previous page. */
export function listReviews(db: Executor, limit: number, after: TimeCursor | null) {
  return db
    .select({
      voiceId: voices.id,
      ownerId: voices.ownerId,
      name: voices.name,
      model: voices.model,
      speechSeconds: voices.speechSeconds,
      heldAt: voiceReviews.heldAt,
      matchedVoiceId: voiceReviews.matchedVoiceId,
      matchedOwnerId: matchedVoices.ownerId,
      similarity: voiceReviews.similarity,
      disputeId: voiceDisputes.id,
      claimantId: voiceDisputes.claimantId,
      disputeOpenedAt: voiceDisputes.openedAt,
      disputeEvidence: voiceDisputes.spokenEvidence,
    })
    .from(voiceReviews)
    .innerJoin(voices, eq(voices.id, voiceReviews.voiceId))
    .leftJoin(matchedVoices, eq(matchedVoices.id, voiceReviews.matchedVoiceId))
    .leftJoin(voiceDisputes, and(eq(voiceDisputes.voiceId, voiceReviews.voiceId), eq(voiceDisputes.status, 'open')))
    .where(
      after
        ? sql`(${voiceReviews.heldAt}, ${voiceReviews.voiceId}) > (${after.at.toISOString()}::timestamptz, ${after.id}::uuid)`
        : undefined,
    )
    .orderBy(asc(voiceReviews.heldAt), asc(voiceReviews.voiceId))
    .limit(limit);
}

export async function insertDispute(
  db: Executor,
  dispute: Omit<typeof voiceDisputes.$inferInsert, 'embedding'> & { embedding: Float32Array },
): Promise<VoiceDisputeRow> {
  const [row] = await withoutVectorsInErrors(() =>
    db
      .insert(voiceDisputes)
      .values({ ...dispute, embedding: toVectorLiteral(dispute.embedding) })
      .returning(),
  );
  return row!;
}

/** An open dispute as a decision reads it: the claimant's voiceprint as numbers, null once erased. */
export type OpenDispute = Omit<VoiceDisputeRow, 'embedding'> & { embedding: Float32Array | null };

/** The open dispute of a voice, locked for the rest of the transaction, or null. */
export async function lockOpenDisputeOfVoice(db: Executor, voiceId: string): Promise<OpenDispute | null> {
  const [row] = await withoutVectorsInErrors(() =>
    db
      .select({ ...getTableColumns(voiceDisputes), embedding: sql<string | null>`${voiceDisputes.embedding}::text` })
      .from(voiceDisputes)
      .where(and(eq(voiceDisputes.voiceId, voiceId), eq(voiceDisputes.status, 'open')))
      .for('update'),
  );
  return row ? { ...row, embedding: row.embedding === null ? null : parseVectorText(row.embedding) } : null;
}

/** The claimant's disputes, newest first; `after` is the last row of the previous page. */
export function listDisputesOfClaimant(db: Executor, claimantId: string, limit: number, after: TimeCursor | null) {
  return db
    .select({
      id: voiceDisputes.id,
      status: voiceDisputes.status,
      name: voiceDisputes.name,
      openedAt: voiceDisputes.openedAt,
      decidedAt: voiceDisputes.decidedAt,
      transferredVoiceId: voiceDisputes.transferredVoiceId,
      checkId: voiceDisputes.checkId,
    })
    .from(voiceDisputes)
    .where(and(eq(voiceDisputes.claimantId, claimantId), olderThan(voiceDisputes.openedAt, voiceDisputes.id, after)))
    .orderBy(desc(voiceDisputes.openedAt), desc(voiceDisputes.id))
    .limit(limit);
}

/**
 * Ends the voice's open dispute, if any, with `status`: the claimant's biometric data goes (a
 * transfer has already copied it to `transferredVoiceId`). Answers the closed dispute.
 */
export async function closeOpenDisputeOfVoice(
  db: Executor,
  voiceId: string,
  status: Exclude<DisputeStatus, 'open'>,
  now: Date,
  transferredVoiceId: string | null = null,
): Promise<Pick<VoiceDisputeRow, 'id' | 'claimantId'> | null> {
  const [row] = await db
    .update(voiceDisputes)
    .set({ status, decidedAt: now, transferredVoiceId, embedding: null, recording: null, recordingFilename: null })
    .where(and(eq(voiceDisputes.voiceId, voiceId), eq(voiceDisputes.status, 'open')))
    .returning({ id: voiceDisputes.id, claimantId: voiceDisputes.claimantId });
  return row ?? null;
}

/** What a verification of a file naming the voice reads of it: its owner, status, synthesis consent and speech. */
export async function voiceStanding(db: Executor, voiceId: string) {
  const [row] = await db
    .select({ ownerId: voices.ownerId, status: voices.status, consentStatus: voices.consentStatus, speechSeconds: voices.speechSeconds })
    .from(voices)
    .where(eq(voices.id, voiceId));
  return row ?? null;
}
