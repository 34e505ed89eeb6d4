import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, parseTlogProof, pathOf } from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { embedAuthorization } from '@vip/shared-schema/client/provenance';
import { readCredentials } from '@vip/shared-schema/provenance/credentials';
import { auditReceiptRoute } from '@vip/shared-schema/routes/origin/audit';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { asc, eq, gt } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries, auditTlogState, auditTlogTiles } from '../db/schema.js';
import { gateRecord, restoreChain } from '../testing/audit-records.js';
import { readAudioFixture } from '../testing/fixtures.js';
import { buildGoVerifier, type GoVerifier, goMissing } from '../testing/go-verifier.js';
import { loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { EMPTY_TREE_ROOT } from './merkle.js';
import { queueAuditRecords } from './queue.js';

/**
 * The transparency log checked by golang.org/x/mod/sumdb (note and tlog), through the Go program
 * in test/tlog-verify reading the origin over HTTP: receipts (also one taken out of a signed audio
 * file), checkpoints against the tiles, consistency of two checkpoints from the tiles alone, and
 * tampering of the entries.
 */

if (goMissing) console.warn(`[tlog-go.test] skipped: ${goMissing}`);

describe.skipIf(goMissing !== null)(
  `the transparency log, checked with Go's sumdb packages${goMissing ? ` (skipped: ${goMissing})` : ''}`,
  () => {
    let origin: TestOrigin;
    let adminToken: string;
    let goVerifier: GoVerifier;
    let common: string[];
    beforeAll(async () => {
      const [started, verifier] = await Promise.all([startTestOrigin(), buildGoVerifier()]);
      origin = started;
      goVerifier = verifier;
      adminToken = (await loggedIn(origin, 'admin')).accessToken;
      const url = await origin.app.listen({ port: 0, host: '127.0.0.1' });
      const vkey = (await origin.app.inject({ method: 'GET', url: '/tlog/vkey' })).body;
      common = ['-url', url, '-vkey', vkey];
    }, 120_000);
    afterAll(async () => {
      goVerifier?.dispose();
      await origin?.close();
    });

    const db = () => origin.database.db;
    const go = (...args: string[]) => goVerifier.run([...common, ...args]);
    const receiptChecked = (checkId: string) => go('-bearer', adminToken, 'receipt', checkId);

    async function chainAndSign(count: number) {
      const records = Array.from({ length: count }, () => gateRecord());
      await queueAuditRecords(db(), records, origin.runtime.clock.now());
      while ((await origin.audit.appendPending()).more);
      expect(await origin.tlog.signCheckpoint()).toBe(true);
      return records;
    }

    /** Tampers with the stored log, runs the checks, and puts entries and tree back as they were. */
    async function whileTampered(tamper: () => Promise<unknown>, check: () => Promise<void>) {
      const entries = await db().select({ entryJson: auditEntries.entryJson, entryHash: auditEntries.entryHash }).from(auditEntries);
      const tiles = await db().select().from(auditTlogTiles);
      const [state] = await db().select().from(auditTlogState);
      try {
        await tamper();
        await check();
      } finally {
        await restoreChain(db(), entries);
        await db().delete(auditTlogTiles);
        await db().insert(auditTlogTiles).values(tiles);
        await db().update(auditTlogState).set(state!);
      }
    }

    const entryAt = async (seq: number) => (await db().select().from(auditEntries).where(eq(auditEntries.seq, seq)))[0]!;
    const rewrite = (seq: number, entry: Record<string, unknown>) =>
      db()
        .update(auditEntries)
        .set({ entryJson: canonicalJson(entry) })
        .where(eq(auditEntries.seq, seq));

    it('verifies receipts across tile boundaries, the checkpoint against the tiles, and consistency minutes apart', async () => {
      const first = await chainAndSign(600);
      expect((await go('checkpoint')).output).toMatch(/^ok checkpoint size=\d+/);
      const oldCheckpoint = join(tmpdir(), `vip-checkpoint-${process.pid}-${Date.now()}.txt`);
      writeFileSync(oldCheckpoint, (await origin.app.inject({ method: 'GET', url: '/tlog/checkpoint' })).body);

      for (const record of [first[0]!, first[255]!, first[256]!, first[599]!]) {
        const checked = await receiptChecked(record.check_id);
        expect(checked, checked.output).toMatchObject({ ok: true });
      }
      // Minutes later, as far as the log can tell: the clock moved and the tree grew by whole tiles.
      origin.runtime.advance(5 * 60_000);
      const later = await chainAndSign(800);
      const consistent = await go('consistency', oldCheckpoint);
      expect(consistent, consistent.output).toMatchObject({ ok: true });
      expect(consistent.output).toMatch(/^ok consistent old=\d+ new=\d+$/);
      expect((await receiptChecked(later.at(-1)!.check_id)).ok).toBe(true);
      expect((await go('checkpoint')).ok).toBe(true);
    }, 120_000);

    it('lets a platform verify its own receipt with its API key', async () => {
      const name = `Go Platform ${Date.now()}`;
      const { api_key: apiKey } = await platformWithApiKey(origin, adminToken, name);
      const record = gateRecord({ platform_name: name });
      await queueAuditRecords(db(), [record], origin.runtime.clock.now());
      while ((await origin.audit.appendPending()).more);
      await origin.tlog.signCheckpoint();
      expect((await go('-api-key', apiKey, 'receipt', record.check_id)).ok).toBe(true);
      const other = await go('-api-key', apiKey, 'receipt', gateRecord().check_id);
      expect(other.ok).toBe(false);
      expect(other.output).toContain('404');
    });

    it('verifies the receipt taken out of a signed audio file’s Content Credentials, and refuses it tampered', async () => {
      const name = `Go Signer ${Date.now()}`;
      const { api_key: apiKey } = await platformWithApiKey(origin, adminToken, name);
      const approval = gateRecord({
        platform_name: name,
        decision: 'allow',
        action: 'authorized',
        reason: null,
        license_status: 'licensed',
      });
      // Among other entries, so the receipt's inclusion path is not empty.
      await queueAuditRecords(db(), [approval, ...Array.from({ length: 40 }, () => gateRecord())], origin.runtime.clock.now());
      while ((await origin.audit.appendPending()).more);
      await origin.tlog.signCheckpoint();
      const receipt = (
        await origin.app.inject({
          method: 'GET',
          url: pathOf(auditReceiptRoute, { check_id: approval.check_id }),
          headers: { 'x-api-key': apiKey },
        })
      ).json() as AuditReceipt;
      const signed = await embedAuthorization(
        readAudioFixture({ file: 'a.mp3' }),
        'audio/mpeg',
        { check_id: approval.check_id, receipt },
        platformSigner(name).signer,
      );

      const credentials = await readCredentials(signed, 'audio/mpeg');
      if (!credentials?.authorization.present || !credentials.authorization.valid) throw new Error('the file carries no authorization');
      const taken = credentials.authorization.assertion.receipt;
      expect(parseTlogProof(taken.proof).path.length).toBeGreaterThan(0);
      const saved = (receiptJson: AuditReceipt) => {
        const file = join(tmpdir(), `vip-receipt-${process.pid}-${Date.now()}-${Math.random()}.json`);
        writeFileSync(file, JSON.stringify(receiptJson));
        return file;
      };
      const checked = await go('receipt-file', saved(taken));
      expect(checked, checked.output).toMatchObject({ ok: true });
      const signedSize = parseTlogProof(taken.proof).checkpoint.split('\n')[1];
      expect(checked.output).toBe(`ok receipt index=${taken.index} size=${signedSize}`);

      const tampered = await go('receipt-file', saved({ ...taken, leaf: taken.leaf.replace('"audiobook"', '"advertising"') }));
      expect(tampered.ok).toBe(false);
      expect(tampered.output).toMatch(/^FAIL inclusion/);
      const otherCheck = await go('receipt-file', saved({ ...taken, check_id: gateRecord().check_id }));
      expect(otherCheck.output).toBe('FAIL the leaf is not the entry the receipt names');
    });

    describe('catches tampering', () => {
      let records: ReturnType<typeof gateRecord>[];
      let seqOf: (checkId: string) => Promise<number>;
      beforeAll(async () => {
        records = await chainAndSign(20);
        seqOf = async (checkId) =>
          (await db().select({ seq: auditEntries.seq }).from(auditEntries).where(eq(auditEntries.checkId, checkId)))[0]!.seq;
      });

      it('an edited entry', async () => {
        const target = records[3]!;
        const seq = await seqOf(target.check_id);
        await whileTampered(
          async () => rewrite(seq, { ...JSON.parse((await entryAt(seq)).entryJson), decision: 'allow' }),
          async () => {
            const checked = await receiptChecked(target.check_id);
            expect(checked.ok).toBe(false);
            expect(checked.output).toMatch(/inclusion/);
          },
        );
        expect((await receiptChecked(target.check_id)).ok).toBe(true);
      });

      it('a dropped entry, the later ones renumbered to close the gap', async () => {
        // Records queued together are chained in check_id order: drop one inside the batch, by seq.
        const dropped = Math.min(...(await Promise.all(records.map((record) => seqOf(record.check_id))))) + 5;
        const follower = { check_id: JSON.parse((await entryAt(dropped + 1)).entryJson).check_id as string };
        await whileTampered(
          async () => {
            const later = await db().select().from(auditEntries).where(gt(auditEntries.seq, dropped)).orderBy(asc(auditEntries.seq));
            await db().delete(auditEntries).where(eq(auditEntries.seq, dropped));
            for (const row of later) await rewrite(row.seq, { ...JSON.parse(row.entryJson), seq: row.seq - 1 });
          },
          async () => {
            const checked = await receiptChecked(follower.check_id);
            expect(checked.ok).toBe(false);
            expect(checked.output).toMatch(/inclusion/);
          },
        );
      });

      it('two entries swapped', async () => {
        const [a, b] = [records[8]!, records[9]!];
        const [seqA, seqB] = [await seqOf(a.check_id), await seqOf(b.check_id)];
        await whileTampered(
          async () => {
            const [entryA, entryB] = [JSON.parse((await entryAt(seqA)).entryJson), JSON.parse((await entryAt(seqB)).entryJson)];
            await rewrite(seqA, { ...entryA, seq: -1 });
            await rewrite(seqB, { ...entryB, seq: seqA });
            await rewrite(-1, { ...entryA, seq: seqB });
          },
          async () => {
            for (const record of [a, b]) expect((await receiptChecked(record.check_id)).ok).toBe(false);
          },
        );
      });

      it('a tree rebuilt from an edited chain: the tiles no longer give the signed root, nor extend an older checkpoint', async () => {
        const target = records[2]!;
        const seq = await seqOf(target.check_id);
        const older = join(tmpdir(), `vip-checkpoint-old-${process.pid}-${Date.now()}.txt`);
        writeFileSync(older, (await origin.app.inject({ method: 'GET', url: '/tlog/checkpoint' })).body);
        await chainAndSign(3);
        await whileTampered(
          async () => {
            await rewrite(seq, { ...JSON.parse((await entryAt(seq)).entryJson), reason: 'license_ok' });
            // Whoever edits the table can rebuild the tree from it (the appender does so from an empty tree)...
            await db().delete(auditTlogTiles);
            await db().update(auditTlogState).set({ treeSize: 0, rootHash: EMPTY_TREE_ROOT });
            while ((await origin.audit.appendPending()).more);
          },
          async () => {
            // ...but not sign for it: the checkpoint is still the honest one, and the tiles betray the edit.
            for (const checked of [await go('checkpoint'), await go('consistency', older), await receiptChecked(target.check_id)]) {
              expect(checked.ok, checked.output).toBe(false);
            }
          },
        );
        expect((await go('checkpoint')).ok).toBe(true);
        expect((await go('consistency', older)).ok).toBe(true);
      });
    });
  },
);
