import { DurableObject } from 'cloudflare:workers';
import type { AuditRecord } from '@vip/shared-schema';
import type { ShardAdmission } from '../gate/outcomes.js';
import { countInWindow, type RateWindow } from '../gate/rate-window.js';

/** In-memory copies this object keeps of its own rows are dropped past this many entries. */
const MEMORY_MAX_ENTRIES = 10_000;

/**
 * The home of a set of callers (gate/callers.ts `homeOf`), one shard of several, with three jobs: it
 * counts their rate limits, holds for API keys the revocation state the origin pushes (which the gate
 * asks on every request), and keeps the audit records of their decisions (docs/CONTRACT.md#audit-chain)
 * until the origin acknowledges them: a record is written here before the gate answers, so nothing
 * is lost between planes. The object handles one call at a time, so the count is exact; admitting a request,
 * checking its key and storing its decision is one call and one storage commit.
 *
 * A decision is one row: the record carries its caller's window count, so the window's own row is
 * written only when that count would otherwise be lost: before acknowledged records are deleted,
 * before the memory of windows is cleared, and for a request that records nothing here. After an
 * eviction, the counts are read back from the window rows and the pending records, whichever is
 * newer (DECISIONS.md, "Rows written").
 *
 * It is the only writer of its rows, so what it last wrote is what storage holds: windows and key
 * states are kept in memory once read, and storage is read only after the object was evicted.
 */
export class CallerHome extends DurableObject<Env> {
  private readonly windows = new Map<string, RateWindow | null>();
  /** Windows whose count only pending records hold: written to their rows before those go. */
  private readonly unwritten = new Set<string>();
  private readonly keyRevoked = new Map<string, boolean>();
  /** The row of each record handed out by `pull`, so its acknowledgement deletes by rowid. */
  private readonly handedOut = new Map<string, number>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const sql = ctx.storage.sql;
    // seq is the rowid (increasing, without AUTOINCREMENT's counter row), and check_id has no index
    // (acknowledgements find their row through `handedOut`). A check_id is appended once: each
    // decision has its own.
    sql.exec(
      'CREATE TABLE IF NOT EXISTS pending (seq INTEGER PRIMARY KEY, check_id TEXT NOT NULL, record TEXT NOT NULL, window_key TEXT, window_start INTEGER, window_count INTEGER)',
    );
    // Shards created before records carried their window count.
    const columns = sql.exec<{ name: string }>('PRAGMA table_info(pending)').toArray();
    if (!columns.some((column) => column.name === 'window_key')) {
      for (const column of ['window_key TEXT', 'window_start INTEGER', 'window_count INTEGER'])
        sql.exec(`ALTER TABLE pending ADD COLUMN ${column}`);
    }
    // WITHOUT ROWID: the key is the table, so a window's first write is one row, not two (row and index).
    sql.exec('CREATE TABLE IF NOT EXISTS windows (key TEXT PRIMARY KEY, start INTEGER NOT NULL, count INTEGER NOT NULL) WITHOUT ROWID');
    sql.exec('CREATE TABLE IF NOT EXISTS api_keys (key_hash TEXT PRIMARY KEY, version INTEGER NOT NULL, revoked INTEGER NOT NULL)');
    this.recoverWindowsOfPendingRecords();
  }

  /** Returns once the write is durable (the output gate holds the reply until then). */
  append(checkId: string, record: string): void {
    this.ctx.storage.sql.exec('INSERT INTO pending (check_id, record) VALUES (?, ?)', checkId, record);
  }

  /**
   * Counts one request against `key`'s fixed window, unless `keyHash` names a revoked API key (then
   * nothing is counted); when admitted and a record is given, stores it with the count, else the
   * count alone. Written in one commit before the reply leaves (output gate).
   */
  admit(
    key: string,
    limit: number,
    windowSeconds: number,
    nowMs: number,
    record: PendingRecord | null,
    keyHash: string | null,
  ): ShardAdmission {
    if (keyHash !== null && this.isRevoked(keyHash)) return { keyRevoked: true };
    const { decision, next } = countInWindow(this.storedWindow(key), limit, windowSeconds, nowMs);
    if (!next) return { keyRevoked: false, rate: decision };
    this.keepWindow(key, next);
    if (record) {
      this.ctx.storage.sql.exec(
        'INSERT INTO pending (check_id, record, window_key, window_start, window_count) VALUES (?, ?, ?, ?, ?)',
        record.checkId,
        record.json,
        key,
        next.start,
        next.count,
      );
      this.unwritten.add(key);
    } else this.writeWindow(key, next);
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
   * acknowledgement) by one scan of the pending rows for all of them. The window counts those
   * records carried are written to their rows first, in the same commit.
   */
  pull(ack: readonly string[], limit: number): { acked: number; records: AuditRecord[] } {
    const sql = this.ctx.storage.sql;
    if (ack.length) this.writeUnwrittenWindows();
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

  /**
   * The pending record of `checkId`, or null once the origin acknowledged it (or it was never
   * decided here). One scan of the pending rows, which the origin's pulls keep short.
   */
  held(checkId: string): AuditRecord | null {
    const row = this.ctx.storage.sql
      .exec<{ record: string }>('SELECT record FROM pending WHERE check_id = ? LIMIT 1', checkId)
      .toArray()[0];
    return row ? (JSON.parse(row.record) as AuditRecord) : null;
  }

  private storedWindow(key: string): RateWindow | null {
    let window = this.windows.get(key);
    if (window === undefined) {
      window = this.ctx.storage.sql.exec<RateWindowRow>('SELECT start, count FROM windows WHERE key = ?', key).toArray()[0] ?? null;
      this.keepWindow(key, window);
    }
    return window;
  }

  /** Keeps a window in memory; a full memory is cleared, after the counts only it knows are written. */
  private keepWindow(key: string, window: RateWindow | null): void {
    if (this.windows.size >= MEMORY_MAX_ENTRIES && !this.windows.has(key)) {
      this.writeUnwrittenWindows();
      this.windows.clear();
    }
    this.windows.set(key, window);
  }

  private writeWindow(key: string, window: RateWindow): void {
    this.ctx.storage.sql.exec(
      'INSERT INTO windows (key, start, count) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET start = excluded.start, count = excluded.count',
      key,
      window.start,
      window.count,
    );
    this.unwritten.delete(key);
  }

  private writeUnwrittenWindows(): void {
    for (const key of this.unwritten) {
      const window = this.windows.get(key);
      if (window) this.writeWindow(key, window);
    }
    this.unwritten.clear();
  }

  /**
   * After an eviction: the newest window each pending record's caller reached, where it is newer
   * than the window's row (one scan of the pending rows, which the origin's pulls keep short).
   */
  private recoverWindowsOfPendingRecords(): void {
    const sql = this.ctx.storage.sql;
    const counted = sql.exec<{ key: string; start: number; count: number }>(
      'SELECT window_key AS key, window_start AS start, MAX(window_count) AS count FROM pending WHERE window_key IS NOT NULL GROUP BY window_key, window_start',
    );
    for (const { key, start, count } of counted) {
      const known = this.storedWindow(key);
      if (known && (known.start > start || (known.start === start && known.count >= count))) continue;
      this.windows.set(key, { start, count });
      this.unwritten.add(key);
    }
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

/** A decision record as the shard stores it: its check_id and its JSON, made by the caller. */
export interface PendingRecord {
  checkId: string;
  json: string;
}

function remember<T>(memory: Map<string, T>, key: string, value: T): void {
  if (memory.size >= MEMORY_MAX_ENTRIES && !memory.has(key)) memory.clear();
  memory.set(key, value);
}
