import { sql } from 'drizzle-orm';
import type { Executor } from './client.js';

/**
 * How long a background job waits for its turn at an advisory lock that serialises it across origin
 * processes (chain appends, audit collection, checkpoint signing, webhook fan-out). Longer than a
 * request's DATABASE_LOCK_TIMEOUT_MS: taking turns is what these locks are for, and one turn (a batch
 * of a thousand chain entries with their tree tiles) may outlast a request's bound. Still bounded,
 * so a turn held by a frozen process does not keep the others' connections forever: they log, back
 * off and try again (jobs/background-loop.ts).
 */
export const TURN_WAIT_MS = 30_000;

/**
 * The jobs that take turns across origin processes, each with its advisory lock key: one table, so two
 * jobs can never share a key by accident (and queue behind each other for nothing). The numbers are
 * arbitrary but must stay the same in every process of a deployment.
 */
const TURN_KEYS = {
  /** Chain appends: one appender at a time extends the hash chain. */
  chainAppend: 6_170_001,
  /** Audit collection: a deny's event is emitted once per check_id. */
  auditCollection: 6_170_002,
  /** Checkpoint signing: each new checkpoint is checked against the last one signed. */
  checkpointSigning: 6_170_003,
  /** Webhook fan-out: deliveries are created in event order. */
  webhookFanOut: 6_170_004,
} as const;

export type JobTurn = keyof typeof TURN_KEYS;

/**
 * Takes the transaction-scoped advisory lock of `turn`, waiting up to TURN_WAIT_MS for it. The longer
 * lock timeout holds for the rest of this transaction, which only background jobs run.
 */
export async function waitForTurn(db: Executor, turn: JobTurn): Promise<void> {
  await db.execute(sql.raw(`set local lock_timeout = ${TURN_WAIT_MS}`));
  await db.execute(sql`select pg_advisory_xact_lock(${sql.raw(String(TURN_KEYS[turn]))})`);
}
