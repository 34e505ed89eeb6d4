import { DurableObject } from 'cloudflare:workers';
import type { AuditRecord } from '@vip/shared-schema';
import type { Env } from '../env.js';
import type { ShardAdmission } from '../gate/outcomes.js';
import { countInWindow, type RateWindow } from '../gate/rate-window.js';

/** In-memory copies this object keeps of its own rows are dropped past this many entries. */
const MEMORY_MAX_ENTRIES = 10_000;

/**
 * Pending audit records (docs/CONTRACT.md#audit-chain), one shard of several. A record is written here before
 * the gate answers and stays until the origin acknowledges it, so nothing is lost between planes.
 *
 * The shard is also the home of a set of callers (gate/callers.ts `homeOf`): it counts their rate
 * limits, and for API keys it holds the revocation state the origin pushes, which the gate asks on
 * every request. The object handles one call at a time, so the count is exact; admitting a request,
 * checking its key and storing its decision is one call and one storage commit.
 *
 * It is the only writer of its rows, so what it last wrote is what storage holds: windows and key
 * states are kept in memory once read, and storage is read only after the object was evicted.
 */
export class AuditOutbox extends DurableObject<Env> {
  private readonly windows = new Map<string, RateWindow | null>();
  private readonly keyRevoked = new Map<string, boolean>();
  /** The row of each record handed out by `pull`, so its acknowledgement deletes by rowid. */
  private readonly handedOut = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    // One row written per record and one per acknowledgement: seq is the rowid (increasing, without
    // AUTOINCREMENT's counter row), and check_id has no index (acknowledgements find their row
    // through `handedOut`). A check_id is appended once: each decision has its own.
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY, check_id TEXT NOT NULL, record TEXT NOT NULL)');
    ctx.storage.sql.exec('CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, start INTEGER NOT NULL, count INTEGER NOT NULL)');
    ctx.storage.sql.exec(
      'CREATE TABLE IF NOT EXISTS api_keys (key_hash TEXT PRIMARY KEY, version INTEGER NOT NULL, revoked INTEGER NOT NULL)',
    );
  }

  /** Returns once the write is durable (the output gate holds the reply until then). */
  append(record: AuditRecord): void {
    this.ctx.storage.sql.exec('INSERT INTO pending (check_id, record) VALUES (?, ?)', record.check_id, JSON.stringify(record));
  }

  /**
   * Counts one request against `key`'s fixed window, unless `keyHash` names a revoked API key (then
   * nothing is counted); when admitted and a record is given, stores it in the same step. Both
   * writes commit together before the reply leaves (output gate).
   */
  admit(
    key: string,
    limit: number,
    windowSeconds: number,
    nowMs: number,
    record: AuditRecord | null,
    keyHash: string | null,
  ): ShardAdmission {
    if (keyHash !== null && this.isRevoked(keyHash)) return { keyRevoked: true };
    const { decision, next } = countInWindow(this.storedWindow(key), limit, windowSeconds, nowMs);
    if (!next) return { keyRevoked: false, rate: decision };
    this.ctx.storage.sql.exec(
      'INSERT INTO windows (key, start, count) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET start = excluded.start, count = excluded.count',
      key,
      next.start,
      next.count,
    );
    remember(this.windows, key, next);
    if (record) this.append(record);
    return { keyRevoked: false, rate: decision };
  }

  /**
   * The origin's word on an API key whose home this shard is (index sync): kept unless a newer or
   * equal version is stored, so a replayed older update cannot bring a revoked key back.
   */
  applyKeyUpdate(keyHash: string, version: number, revoked: boolean): 'applied' | 'stale' {
    const sql = this.ctx.storage.sql;
    const current = sql.exec<{ version: number }>('SELECT version FROM api_keys WHERE key_hash = ?', keyHash).toArray()[0];
    if (current && current.version >= version) return 'stale';
    sql.exec(
      'INSERT INTO api_keys (key_hash, version, revoked) VALUES (?, ?, ?) ON CONFLICT (key_hash) DO UPDATE SET version = excluded.version, revoked = excluded.revoked',
      keyHash,
      version,
      revoked ? 1 : 0,
    );
    remember(this.keyRevoked, keyHash, revoked);
    return 'applied';
  }

  /**
   * Drops what the origin has appended, then hands out the oldest pending records. A record handed
   * out by this instance is deleted by its rowid; any other (the object was evicted between pull and
   * acknowledgement) by one scan of the pending rows for all of them.
   */
  pull(ack: readonly string[], limit: number): { acked: number; records: AuditRecord[] } {
    const sql = this.ctx.storage.sql;
    let acked = 0;
    const unknown: string[] = [];
    for (const checkId of ack) {
      const seq = this.handedOut.get(checkId);
      if (seq === undefined) unknown.push(checkId);
      else {
        acked += sql.exec('DELETE FROM pending WHERE seq = ? AND check_id = ?', seq, checkId).rowsWritten;
        this.handedOut.delete(checkId);
      }
    }
    if (unknown.length) {
      acked += sql.exec('DELETE FROM pending WHERE check_id IN (SELECT value FROM json_each(?))', JSON.stringify(unknown)).rowsWritten;
    }
    const rows = sql
      .exec<{ seq: number; check_id: string; record: string }>('SELECT seq, check_id, record FROM pending ORDER BY seq LIMIT ?', limit)
      .toArray();
    for (const row of rows) remember(this.handedOut, row.check_id, row.seq);
    return { acked, records: rows.map((row) => JSON.parse(row.record) as AuditRecord) };
  }

  private storedWindow(key: string): RateWindow | null {
    let window = this.windows.get(key);
    if (window === undefined) {
      window = this.ctx.storage.sql.exec<RateWindowRow>('SELECT start, count FROM windows WHERE key = ?', key).toArray()[0] ?? null;
      remember(this.windows, key, window);
    }
    return window;
  }

  /** A key the origin never pushed here is not revoked: the KV index copy vouched for it. */
  private isRevoked(keyHash: string): boolean {
    let revoked = this.keyRevoked.get(keyHash);
    if (revoked === undefined) {
      revoked =
        this.ctx.storage.sql.exec<{ revoked: number }>('SELECT revoked FROM api_keys WHERE key_hash = ?', keyHash).toArray()[0]?.revoked ===
        1;
      remember(this.keyRevoked, keyHash, revoked);
    }
    return revoked;
  }
}

type RateWindowRow = { start: number; count: number };

function remember<T>(memory: Map<string, T>, key: string, value: T): void {
  if (memory.size >= MEMORY_MAX_ENTRIES && !memory.has(key)) memory.clear();
  memory.set(key, value);
}
