import { auditRecordSchema, GENESIS_HASH } from '@vip/shared-schema';
import { asc, gte, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningJwk } from '../auth/access-tokens.js';
import type { DatabaseHandle } from '../db/client.js';
import { auditEntries } from '../db/schema.js';
import { systemRuntime } from '../runtime.js';
import { adversarialTexts, gateRecord } from '../testing/audit-records.js';
import { openTestDatabase } from '../testing/database.js';
import { linesOfPage } from './chain-page.js';
import { createCheckpointSigner } from './checkpoints.js';
import { chainEntry, type StoredEntry } from './entries.js';
import { AuditService } from './service.js';
import * as store from './store.js';

let handle: DatabaseHandle;
let audit: AuditService;
beforeAll(async () => {
  handle = await openTestDatabase();
  audit = new AuditService({
    db: handle.db,
    clock: systemRuntime.clock,
    checkpoints: await createCheckpointSigner(await generateSigningJwk('verify-test')),
  });
});
afterAll(() => handle?.close());

/** Replaces the chain with `count` entries, some with adversarial text, written straight to the table. */
async function writeChain(
  count: number,
  adversarial: { platform_name: string | null; reason: string | null; caller_id: string | null; token_jti: string | null }[] = [],
) {
  await handle.db.delete(auditEntries);
  let previous = GENESIS_HASH;
  const entries: StoredEntry[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const record = auditRecordSchema.parse(gateRecord());
    const entry = chainEntry({ ...record, ...adversarial[seq - 1] }, seq, new Date(Date.UTC(2026, 0, 1) + seq * 7), previous);
    entries.push(entry);
    previous = entry.entryHash;
  }
  for (let i = 0; i < entries.length; i += 1_000) await store.insertEntries(handle.db, entries.slice(i, i + 1_000));
  return entries;
}

describe('chain verification', () => {
  it('reads back every text exactly, so entries with any storable text verify', async () => {
    const texts = adversarialTexts(300);
    const written = await writeChain(texts.length, texts);
    const throughDrizzle = await handle.db
      .select({ seq: auditEntries.seq, entry_hash: auditEntries.entryHash, entryJson: auditEntries.entryJson })
      .from(auditEntries)
      .orderBy(asc(auditEntries.seq));
    expect(linesOfPage(await store.readChainPage(handle.db, 1, written.length))).toEqual(throughDrizzle);
    expect(await store.chainRows(handle.db, 1, written.length)).toEqual(throughDrizzle);
    expect(throughDrizzle.map(({ entry_hash, entryJson }) => ({ entryHash: entry_hash, entryJson }))).toEqual(written);
    expect(await audit.verify()).toEqual({
      valid: true,
      entries: written.length,
      head_hash: written.at(-1)!.entryHash,
      first_invalid_seq: null,
    });
  });

  describe('over several pages', () => {
    const count = 11_000;
    let entries: StoredEntry[];
    beforeAll(async () => {
      entries = await writeChain(count);
    });

    /** Tampers, verifies, and restores the rows from `fromSeq` on. */
    async function verifyTampered(fromSeq: number, tamper: () => Promise<unknown>, range?: { from_seq?: number; to_seq?: number }) {
      try {
        await tamper();
        return await audit.verify(range);
      } finally {
        await handle.db.delete(auditEntries).where(gte(auditEntries.seq, fromSeq));
        const rest = entries.slice(fromSeq - 1);
        for (let i = 0; i < rest.length; i += 1_000) await store.insertEntries(handle.db, rest.slice(i, i + 1_000));
      }
    }

    it('verifies the whole chain and any range', async () => {
      expect(await audit.verify()).toEqual({ valid: true, entries: count, head_hash: entries.at(-1)!.entryHash, first_invalid_seq: null });
      expect(await audit.verify({ from_seq: 4_990, to_seq: 10_010 })).toEqual({
        valid: true,
        entries: 5_021,
        head_hash: entries[10_009]!.entryHash,
        first_invalid_seq: null,
      });
    });

    it('names a row deleted at the end of a page', async () => {
      const verdict = await verifyTampered(5_000, () => handle.db.execute(sql`delete from audit_entries where seq = 5000`));
      expect(verdict).toMatchObject({ valid: false, first_invalid_seq: 5_000, head_hash: entries[4_998]!.entryHash });
    });

    it('names the start of a gap longer than a page', async () => {
      const verdict = await verifyTampered(4_000, () => handle.db.execute(sql`delete from audit_entries where seq between 4000 and 10500`));
      expect(verdict).toMatchObject({ valid: false, first_invalid_seq: 4_000, head_hash: entries[3_998]!.entryHash });
    });

    it('names an edited row on a later page, in a range too', async () => {
      const edit = () =>
        handle.db.execute(
          sql`update audit_entries set entry_json = replace(entry_json, '"reason":"no_license"', '"reason":"scope_mismatch"') where seq = 7321`,
        );
      expect(await verifyTampered(7_321, edit)).toMatchObject({ valid: false, first_invalid_seq: 7_321 });
      expect(await verifyTampered(7_321, edit, { from_seq: 6_000 })).toMatchObject({ valid: false, first_invalid_seq: 7_321 });
    });

    it('names a deleted row whose neighbour smuggles it back into the page text with a record separator', async () => {
      // entry_json must parse as JSON (the derived columns parse it), but entry_hash is any text: row 8001's
      // can carry all of row 8000, so the page text reads byte for byte as the untampered chain, one row short.
      const smuggle = async () => {
        const [deleted, next] = [entries[7_999]!, entries[8_000]!];
        await handle.db.execute(sql`delete from audit_entries where seq = 8000`);
        await handle.db.execute(
          sql`update audit_entries set entry_hash = ${`${deleted.entryHash}8000${deleted.entryJson}\x1e${next.entryHash}`} where seq = 8001`,
        );
      };
      expect(await verifyTampered(8_000, smuggle)).toMatchObject({ valid: false, first_invalid_seq: 8_000 });
    });

    it('fails while a derived column no longer derives from the entry, since filters could then miss entries', async () => {
      const detach = sql`alter table audit_entries alter column platform_name drop expression`;
      try {
        await handle.db.execute(detach);
        expect(await store.detachedDerivedColumns(handle.db)).toEqual(['platform_name']);
        expect(await audit.verify()).toMatchObject({ valid: false, first_invalid_seq: 1 });
        expect(await audit.verify({ from_seq: 5_001 })).toMatchObject({ valid: false, first_invalid_seq: 5_001 });
      } finally {
        await handle.db.execute(sql`alter table audit_entries drop column platform_name`);
        await handle.db.execute(sql`alter table audit_entries add column platform_name text
          generated always as ((entry_json::jsonb ->> 'platform_name')) stored`);
        await handle.db.execute(sql`create index audit_entries_platform_idx on audit_entries (platform_name, seq)`);
      }
      expect(await store.detachedDerivedColumns(handle.db)).toEqual([]);
      expect((await audit.verify()).valid).toBe(true);
    });
  });
});
