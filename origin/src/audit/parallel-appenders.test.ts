import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningJwk } from '../auth/access-tokens.js';
import { type DatabaseHandle, openPostgres } from '../db/client.js';
import { systemRuntime } from '../runtime.js';
import { gateRecord } from '../testing/audit-records.js';
import { openTestDatabase } from '../testing/database.js';
import { appendPendingBatch } from './appender.js';
import { createCheckpointSigner } from './checkpoints.js';
import { appendLeaves, leafHash } from './merkle.js';
import { queueAuditRecords } from './queue.js';
import { AuditService } from './service.js';
import * as tlogStore from './tlog-store.js';

const APPENDERS = 4;
const RECORDS = 2_000;

let primary: DatabaseHandle;
/** One handle per appender: on a Postgres server each is its own pool, as separate origin processes would have. */
let handles: DatabaseHandle[] = [];
beforeAll(async () => {
  primary = await openTestDatabase();
  if (primary.driver === 'postgres') {
    const result = (await primary.db.execute(sql`select current_database() as name`)) as unknown as { rows: { name: string }[] };
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.pathname = `/${result.rows[0]!.name}`;
    handles = await Promise.all(
      Array.from({ length: APPENDERS }, () => openPostgres(url.toString(), { localProxy: true, maxConnections: 2 })),
    );
  } else {
    handles = Array.from({ length: APPENDERS }, () => primary);
  }
});
afterAll(async () => {
  for (const handle of handles) if (handle !== primary) await handle.close();
  await primary?.close();
});

describe('parallel appenders', () => {
  it('produce one gapless, valid chain while records keep arriving', async () => {
    const records = Array.from({ length: RECORDS }, () => gateRecord());
    const producer = (async () => {
      for (let i = 0; i < records.length; i += 100) {
        await queueAuditRecords(primary.db, records.slice(i, i + 100), new Date());
        // Some duplicates, as an at-least-once hand-off delivers them.
        await queueAuditRecords(primary.db, records.slice(Math.max(0, i - 20), i), new Date());
      }
    })();
    let producing = true;
    void producer.finally(() => {
      producing = false;
    });
    const appendUntilDrained = async (handle: DatabaseHandle) => {
      for (;;) {
        const { drained } = await appendPendingBatch(handle.db, systemRuntime.clock, 97);
        if (drained === 0 && !producing) return;
      }
    };
    await Promise.all([producer, ...handles.map(appendUntilDrained)]);

    const counts = (await primary.db.execute(
      sql`select count(*)::int as entries, count(distinct check_id)::int as ids, min(seq)::int as first, max(seq)::int as last from audit_entries`,
    )) as unknown as { rows: { entries: number; ids: number; first: number; last: number }[] };
    expect(counts.rows[0]).toEqual({ entries: RECORDS, ids: RECORDS, first: 1, last: RECORDS });
    const checkpoints = await createCheckpointSigner(await generateSigningJwk('parallel-test'));
    const audit = new AuditService({ db: primary.db, clock: systemRuntime.clock, checkpoints });
    expect(await audit.verify()).toMatchObject({ valid: true, entries: RECORDS, first_invalid_seq: null });
    // The Merkle tree took the same turns: it holds exactly the chain's entries, in seq order.
    const leaves = (await tlogStore.entryJsonsBetween(primary.db, 1, RECORDS)).map(leafHash);
    const { treeSize, rootHash } = await tlogStore.tlogState(primary.db);
    expect(treeSize).toBe(RECORDS);
    expect(rootHash.equals(appendLeaves(new Map(), 0, leaves).root)).toBe(true);
  }, 90_000); // four appenders taking turns on one PGlite, tree included, on a shared machine: more than the default
});
