import { DurableObject } from 'cloudflare:workers';
import type { AuditRecord } from '@vip/shared-schema';
import type { Env } from '../env.js';
import { countInWindow, type RateDecision } from '../gate/rate-window.js';

/**
 * Pending audit records (DESIGN section 5), one shard of several. A record is written here before
 * the gate answers and stays until the origin acknowledges it, so nothing is lost between planes.
 *
 * The shard also counts the gate's rate limits: each limit key has one home shard
 * (gate/audit-shards.ts `shardOfKey`), and the object handles one call at a time, so the count is
 * exact. Admitting a request and storing its decision is then one call and one storage commit.
 */
export class AuditOutbox extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, check_id TEXT NOT NULL UNIQUE, record TEXT NOT NULL)',
    );
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, start INTEGER NOT NULL, count INTEGER NOT NULL)');
  }

  /** Returns once the write is durable (the output gate holds the reply until then). */
  append(record: AuditRecord): void {
    this.ctx.storage.sql.exec('INSERT OR IGNORE INTO pending (check_id, record) VALUES (?, ?)', record.check_id, JSON.stringify(record));
  }

  /**
   * Counts one request against `key`'s fixed window; when admitted and a record is given, stores
   * it in the same step. Both writes commit together before the reply leaves (output gate).
   */
  admit(key: string, limit: number, windowSeconds: number, nowMs: number, record: AuditRecord | null): RateDecision {
    const sql = this.ctx.storage.sql;
    const stored = sql.exec<{ start: number; count: number }>('SELECT start, count FROM windows WHERE key = ?', key).toArray()[0];
    const { decision, next } = countInWindow(stored, limit, windowSeconds, nowMs);
    if (!next) return decision;
    sql.exec(
      'INSERT INTO windows (key, start, count) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET start = excluded.start, count = excluded.count',
      key,
      next.start,
      next.count,
    );
    if (record) this.append(record);
    return decision;
  }

  /** Drops what the origin has appended, then hands out the oldest pending records. */
  pull(ack: readonly string[], limit: number): { acked: number; records: AuditRecord[] } {
    let acked = 0;
    for (const checkId of ack) acked += this.ctx.storage.sql.exec('DELETE FROM pending WHERE check_id = ?', checkId).rowsWritten;
    const rows = this.ctx.storage.sql.exec<{ record: string }>('SELECT record FROM pending ORDER BY seq LIMIT ?', limit).toArray();
    return { acked, records: rows.map((row) => JSON.parse(row.record) as AuditRecord) };
  }
}
