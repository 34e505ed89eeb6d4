import { sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { queueAuditRecords } from './audit/queue.js';
import { gateRecord } from './testing/audit-records.js';
import { startTestOrigin, UNHURRIED_JOBS } from './testing/origin.js';

describe('shutdown', () => {
  it('is app.close(), as in main.ts: the running loops stop, then the database closes', async () => {
    const origin = await startTestOrigin({ jobs: UNHURRIED_JOBS });
    origin.jobs!.start();
    // The appender loop chains a queued decision: the loops are live when the app closes.
    const decision = gateRecord();
    await queueAuditRecords(origin.database.db, [decision], new Date());
    await expect
      .poll(
        async () => (await origin.audit.list({ kind: 'admin' }, { check_id: decision.check_id, limit: 1, order: 'seq' })).entries.length,
      )
      .toBe(1);
    await origin.app.close();
    await expect(origin.database.db.execute(sql`select 1`)).rejects.toThrow();
    expect(origin.logs.join('')).not.toContain('background round failed');
  });
});
