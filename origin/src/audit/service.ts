import { type AuditOrder, type ChainLink, type ChainVerdict, GENESIS_HASH, ProblemError, verifyChainLinks } from '@vip/shared-schema';
import type { Database } from '../db/client.js';
import type { CheckpointRow } from '../db/schema.js';
import { keysetPage } from '../http/cursor.js';
import type { Clock } from '../runtime.js';
import { appendPendingBatch } from './appender.js';
import { ChainHashThread } from './chain-hash-thread.js';
import { hashLine, type PageCheck, type RawChainPage } from './chain-page.js';
import type { CheckpointSigner } from './checkpoints.js';
import { storedToEntry } from './entries.js';
import * as store from './store.js';

export interface AuditServiceDeps {
  db: Database;
  clock: Clock;
  checkpoints: CheckpointSigner;
}

export interface AuditLogQuery {
  check_id?: string;
  voice_id?: string;
  platform_name?: string;
  decision?: string;
  from?: string;
  to?: string;
  order: AuditOrder;
  cursor?: string;
  limit: number;
}

/** Rows read per query while verifying: large enough to amortise the round trip, small enough for memory. */
const VERIFY_PAGE = 5_000;
/** Pages read ahead of the one being hashed (each some 3 MB of entry JSON). */
const VERIFY_READ_AHEAD = 3;

interface Page {
  start: number;
  end: number;
  size: number;
  raw: Promise<RawChainPage>;
  check: Promise<PageCheck>;
}

const APPEND_BATCH = 1_000;

export class AuditService {
  private readonly hashThread = new ChainHashThread();

  constructor(private readonly deps: AuditServiceDeps) {}

  /** One appender round: how many entries it added, and whether more may be queued. */
  async appendPending(batchSize = APPEND_BATCH): Promise<{ appended: number; more: boolean }> {
    const { appended, drained, addedToTree } = await appendPendingBatch(this.deps.db, this.deps.clock, batchSize);
    return { appended, more: drained === batchSize || addedToTree > 0 };
  }

  async list(reader: store.AuditReader, query: AuditLogQuery) {
    const after = query.cursor === undefined ? undefined : decodeAuditCursor(query.cursor, query.order);
    const filter = {
      checkId: query.check_id,
      voiceId: query.voice_id,
      platformName: query.platform_name,
      decision: query.decision,
      from: query.from ? new Date(query.from) : undefined,
      to: query.to ? new Date(query.to) : undefined,
    };
    const { rows, nextCursor } = await keysetPage(
      query.limit,
      (rowsWanted) => store.listEntries(this.deps.db, reader, filter, query.order, after, rowsWanted),
      (last) => encodeAuditCursor(query.order, last),
    );
    return { entries: rows.map(storedToEntry), next_cursor: nextCursor };
  }

  /**
   * Recomputes every entry of the range in seq order. Over the whole chain it also holds the chain
   * to the newest signed checkpoint, which catches what hashes alone cannot: a cut-off tail, or a
   * chain rewritten and re-hashed from some point on.
   */
  async verify(range: { from_seq?: number; to_seq?: number } = {}): Promise<ChainVerdict> {
    const { db } = this.deps;
    const fromSeq = range.from_seq ?? 1;
    const toSeq = range.to_seq ?? Number.MAX_SAFE_INTEGER;
    let previous: ChainLink | null = null;
    if (fromSeq > 1) {
      const anchorHash = await store.entryHashAt(db, fromSeq - 1);
      if (anchorHash === null) return { valid: false, entries: 0, head_hash: GENESIS_HASH, first_invalid_seq: fromSeq - 1 };
      previous = { seq: fromSeq - 1, entry_hash: anchorHash };
    }
    if ((await store.detachedDerivedColumns(db)).length > 0) {
      // The hashes may hold, but the filters can no longer be trusted to find every entry.
      return { valid: false, entries: 0, head_hash: previous?.entry_hash ?? GENESIS_HASH, first_invalid_seq: fromSeq };
    }
    const readPage = (start: number): Page => {
      const end = Math.min(toSeq, start + VERIFY_PAGE - 1);
      const raw = store.readChainPage(db, start, end);
      const check = raw.then((page) => this.hashThread.check(page));
      // A page read ahead and never used (an error or a failed page before it) must not leave a
      // rejection nobody handles, which would end the process; whoever awaits a page still sees it.
      for (const promise of [raw, check]) promise.catch(() => {});
      return { start, end, size: end - start + 1, raw, check };
    };
    // Pages ahead are read while this one is hashed (on the hashing thread): the database, the main
    // thread and the hashing thread work side by side, and a Postgres server answers several pages at
    // once on as many connections.
    const ahead: Page[] = fromSeq <= toSeq ? [readPage(fromSeq)] : [];
    const readAhead = () => {
      for (let last = ahead.at(-1); last && ahead.length < VERIFY_READ_AHEAD && last.end < toSeq; last = ahead.at(-1)) {
        ahead.push(readPage(last.end + 1));
      }
    };
    const dropAhead = async () => {
      await Promise.allSettled(ahead.splice(0).map((page) => page.check));
    };
    let checked = 0;
    let lastRowSeq = fromSeq - 1;
    readAhead();
    for (let page = ahead.shift(); page; page = ahead.shift()) {
      const { rows } = await page.raw;
      if (rows === page.size) readAhead();
      else {
        // A page short of rows ends the chain or has a gap: reading resumes at the next row there is,
        // whose seq then breaks the numbering.
        await dropAhead();
        const nextStart = page.end >= toSeq ? null : await store.firstSeqAfter(db, page.end, toSeq);
        if (nextStart !== null) ahead.push(readPage(nextStart));
        readAhead();
      }
      const { verdict, last } = await this.pageVerdict(page, previous);
      if (!verdict.valid) {
        await dropAhead();
        return { ...verdict, entries: checked + verdict.entries };
      }
      if (!last) continue;
      checked += verdict.entries;
      previous = last;
      lastRowSeq = last.seq;
    }
    const headHash = previous?.entry_hash ?? GENESIS_HASH;
    if (range.from_seq === undefined && range.to_seq === undefined) {
      const broken = await this.checkpointBreak(lastRowSeq);
      if (broken !== null) return { valid: false, entries: checked, head_hash: headHash, first_invalid_seq: broken };
    }
    return { valid: true, entries: checked, head_hash: headHash, first_invalid_seq: null };
  }

  /**
   * A page's verdict given the entry before it: the hashing thread has checked every entry after the
   * page's first; the first is checked here against `previous`. A page whose text did not match its
   * rows is read again row by row and checked here.
   */
  private async pageVerdict(page: Page, previous: ChainLink | null): Promise<{ verdict: ChainVerdict; last: ChainLink | null }> {
    const check = await page.check;
    if (check.kind === 'unreadable') {
      const lines = await store.chainRows(this.deps.db, page.start, page.end);
      const verdict = await verifyChainLinks(lines, previous, hashLine);
      const last = lines.at(-1);
      return { verdict, last: last ? { seq: last.seq, entry_hash: last.entry_hash } : null };
    }
    if (check.kind === 'empty') {
      return { verdict: { valid: true, entries: 0, head_hash: previous?.entry_hash ?? GENESIS_HASH, first_invalid_seq: null }, last: null };
    }
    const first = await verifyChainLinks([check.first], previous, hashLine);
    const verdict = first.valid ? check.rest : first;
    const last = { seq: check.first.seq + check.count - 1, entry_hash: check.rest.head_hash };
    return { verdict: { ...verdict, entries: check.count }, last: verdict.valid ? last : null };
  }

  /** The first seq that contradicts the newest checkpoint, or null. */
  private async checkpointBreak(lastSeq: number): Promise<number | null> {
    const [checkpoint] = await store.latestCheckpoints(this.deps.db, 1);
    if (!checkpoint) return null;
    if (checkpoint.treeSize > lastSeq) return lastSeq + 1;
    const entryHash = await store.entryHashAt(this.deps.db, checkpoint.treeSize);
    return entryHash === checkpoint.headHash ? null : checkpoint.treeSize;
  }

  /** Signs the chain's current size and head, unless the newest checkpoint already says the same. */
  async writeCheckpoint(): Promise<boolean> {
    const { db, clock, checkpoints } = this.deps;
    const head = await store.chainHead(db);
    const [latest] = await store.latestCheckpoints(db, 1);
    if (head.seq === 0 || (latest && latest.treeSize >= head.seq)) return false;
    const signedAt = new Date(clock.now().getTime());
    const statement = { tree_size: head.seq, head_hash: head.entryHash, signed_at: signedAt.toISOString() };
    const signature = await checkpoints.sign(statement);
    await store.insertCheckpoint(db, { treeSize: head.seq, headHash: head.entryHash, signedAt, keyId: checkpoints.keyId, signature });
    return true;
  }

  async listCheckpoints(limit: number) {
    return { checkpoints: (await store.latestCheckpoints(this.deps.db, limit)).map(toCheckpoint) };
  }

  async latestCheckpoint() {
    const [latest] = await store.latestCheckpoints(this.deps.db, 1);
    if (!latest) throw new ProblemError('not_found', 'No checkpoint has been signed yet.');
    return toCheckpoint(latest);
  }

  checkpointKeys() {
    return this.deps.checkpoints.jwks();
  }
}

const toCheckpoint = (row: CheckpointRow) => ({
  tree_size: row.treeSize,
  head_hash: row.headHash,
  signed_at: row.signedAt.toISOString(),
  key_id: row.keyId,
  signature: row.signature,
});

/** Opaque to callers: the position of the last entry of the previous page, in the order it was read in. */
function encodeAuditCursor(order: AuditOrder, last: { seq: number; decidedAt: string }): string {
  const text = order === 'seq' ? `seq:${last.seq}` : `decided_at:${last.decidedAt}|${last.seq}`;
  return Buffer.from(text).toString('base64url');
}

const CURSORS: Record<AuditOrder, RegExp> = {
  seq: /^seq:(\d{1,15})$/,
  decided_at: /^decided_at:(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z)\|(\d{1,15})$/,
};

/** A cursor continues the order it was issued for; one of the other order, or not ours, is a 422. */
function decodeAuditCursor(cursor: string, order: AuditOrder): store.AuditPosition {
  const match = CURSORS[order].exec(Buffer.from(cursor, 'base64url').toString());
  if (!match) {
    throw new ProblemError('validation_failed', `The cursor is not one this API issued for order=${order}.`, {
      errors: [{ field: 'query.cursor', message: 'unknown cursor' }],
    });
  }
  return order === 'seq' ? { order, seq: Number(match[1]) } : { order, decidedAt: match[1]!, seq: Number(match[2]) };
}
