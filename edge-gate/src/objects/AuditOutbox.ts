import { DurableObject } from 'cloudflare:workers';
import type { AuditRecord } from '@vip/shared-schema';
import type { Env } from '../env.js';

/**
 * Pending audit records (DESIGN section 5), one shard of several. A record is written here before
 * the gate answers and stays until the origin acknowledges it, so nothing is lost between planes.
 */
export class AuditOutbox extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY AUTOINCREMENT, check_id TEXT NOT NULL UNIQUE, record TEXT NOT NULL)',
    );
  }

  /** Returns once the write is durable (the output gate holds the reply until then). */
  append(record: AuditRecord): void {
    this.ctx.storage.sql.exec('INSERT OR IGNORE INTO pending (check_id, record) VALUES (?, ?)', record.check_id, JSON.stringify(record));
  }

  /** Drops what the origin has appended, then hands out the oldest pending records. */
  pull(ack: readonly string[], limit: number): { acked: number; records: AuditRecord[] } {
    let acked = 0;
    for (const checkId of ack) acked += this.ctx.storage.sql.exec('DELETE FROM pending WHERE check_id = ?', checkId).rowsWritten;
    const rows = this.ctx.storage.sql.exec<{ record: string }>('SELECT record FROM pending ORDER BY seq LIMIT ?', limit).toArray();
    return { acked, records: rows.map((row) => JSON.parse(row.record) as AuditRecord) };
  }
}
