import { randomUUID } from 'node:crypto';
import { type AuditEntry, auditEntryHash, canonicalJson, GENESIS_HASH, pathOf } from '@vip/shared-schema';
import {
  auditCheckpointKeysRoute,
  auditCheckpointListSchema,
  auditCheckpointSchema,
  auditCheckpointsRoute,
  auditLogPageSchema,
  auditLogRoute,
  auditVerdictSchema,
  auditVerifyRoute,
  latestAuditCheckpointRoute,
} from '@vip/shared-schema/routes/origin/audit';
import { revokeApiKeyRoute } from '@vip/shared-schema/routes/origin/platforms';
import { asc, eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEntries, voices } from '../db/schema.js';
import { gateRecord, restoreChain } from '../testing/audit-records.js';
import { bearer, loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { verifyCheckpointSignature } from './checkpoints.js';
import { queueAuditRecords } from './queue.js';

let origin: TestOrigin;
let adminToken: string;
beforeAll(async () => {
  origin = await startTestOrigin();
  adminToken = (await loggedIn(origin, 'admin')).accessToken;
});
afterAll(() => origin?.close());

const db = () => origin.database.db;

async function chain(records: Parameters<typeof queueAuditRecords>[1]) {
  await queueAuditRecords(db(), records, origin.runtime.clock.now());
  while ((await origin.audit.appendPending()).more);
}

const get = (url: string, headers: Record<string, string> = bearer(adminToken)) => origin.app.inject({ method: 'GET', url, headers });

async function verify(query = '') {
  const response = await get(`${pathOf(auditVerifyRoute)}${query}`);
  expect(response.statusCode).toBe(200);
  return auditVerdictSchema.parse(response.json());
}

async function ownVoice(ownerId: string) {
  const id = randomUUID();
  await db().insert(voices).values({ id, ownerId, name: 'Voice', status: 'ready', model: 'test', speechSeconds: 12, quality: {} });
  return id;
}

/** Runs a tampering on the table and puts every row back afterwards, so the other tests see an intact chain. */
async function whileTampered<T>(tamper: () => Promise<unknown>, check: () => Promise<T>): Promise<T> {
  const saved = await db()
    .select({ entryJson: auditEntries.entryJson, entryHash: auditEntries.entryHash })
    .from(auditEntries)
    .orderBy(asc(auditEntries.seq));
  try {
    await tamper();
    return await check();
  } finally {
    await restoreChain(db(), saved);
  }
}

const entryAt = async (seq: number) => (await db().select().from(auditEntries).where(eq(auditEntries.seq, seq)))[0]!;

/** Rewrites the stored entry at `seq` with some fields changed, still as canonical JSON. */
async function editEntry(seq: number, changes: Partial<AuditEntry>, entryHash?: string) {
  const entry = { ...JSON.parse((await entryAt(seq)).entryJson), ...changes };
  await db()
    .update(auditEntries)
    .set({ entryJson: canonicalJson(entry), ...(entryHash ? { entryHash } : {}) })
    .where(eq(auditEntries.seq, seq));
}

/** Moves the entries with `seq` in [from, to] by `by`, in their JSON (seq is derived from it); two steps keep seq unique. */
async function renumber(from: number, to: number, by: number) {
  const move = (factor: number, offset: number, where: ReturnType<typeof sql>) =>
    db().execute(
      sql`update audit_entries set entry_json = jsonb_set(entry_json::jsonb, '{seq}', to_jsonb(${factor}::bigint * seq + ${offset}))::text where ${where}`,
    );
  await move(-1, -by, sql`seq between ${from} and ${to}`);
  await move(-1, 0, sql`seq < 0`);
}

const headSeq = async () => (await db().select({ max: sql<number>`max(seq)::int` }).from(auditEntries))[0]!.max;

describe('appending', () => {
  it('chains queued records with gapless seq and hashes shared-schema reproduces', async () => {
    await chain(Array.from({ length: 30 }, () => gateRecord()));
    const response = await get(`${pathOf(auditLogRoute)}?limit=1000`);
    const { entries } = auditLogPageSchema.parse(response.json());
    expect(entries.map((entry) => entry.seq)).toEqual(entries.map((_, index) => index + 1));
    let previous = GENESIS_HASH;
    for (const entry of entries) {
      expect(entry.prev_hash).toBe(previous);
      expect(await auditEntryHash(entry)).toBe(entry.entry_hash);
      previous = entry.entry_hash;
    }
    expect(await verify()).toEqual({ valid: true, entries: entries.length, head_hash: previous, first_invalid_seq: null });
  });

  it('appends a check_id once, however often it is queued', async () => {
    const record = gateRecord();
    await chain([record]);
    const before = await headSeq();
    await chain([record]);
    await chain([{ ...record, check_id: record.check_id.toUpperCase() }]);
    expect(await headSeq()).toBe(before);
    const page = auditLogPageSchema.parse((await get(`${pathOf(auditLogRoute)}?check_id=${record.check_id}`)).json());
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]).toMatchObject({
      check_id: record.check_id,
      decision: 'deny',
      license_status: 'unlicensed',
      consent_status: 'active',
    });
  });

  it('holds no biometric data or secrets: only the decision fields', async () => {
    const record = gateRecord();
    await chain([record]);
    const [entry] = auditLogPageSchema.parse((await get(`${pathOf(auditLogRoute)}?check_id=${record.check_id}`)).json()).entries;
    expect(Object.keys(entry!).sort()).toEqual(
      [
        'action',
        'caller_id',
        'caller_type',
        'check_id',
        'consent_status',
        'decided_at',
        'decision',
        'entry_hash',
        'intended_use',
        'kind',
        'license_status',
        'platform_name',
        'prev_hash',
        'reason',
        'recorded_at',
        'seq',
        'token_jti',
        'voice_id',
      ].sort(),
    );
  });
});

describe('GET /audit-log/verify catches tampering', () => {
  async function middle() {
    await chain(Array.from({ length: 6 }, () => gateRecord()));
    return (await headSeq()) - 3;
  }

  it('an edited field', async () => {
    const seq = await middle();
    const verdict = await whileTampered(
      () => editEntry(seq, { decision: 'allow' }),
      () => verify(),
    );
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: seq, head_hash: (await entryAt(seq - 1)).entryHash });
  });

  it('an edited field with its entry_hash recomputed', async () => {
    const seq = await middle();
    const row = await entryAt(seq);
    const verdict = await whileTampered(
      async () => {
        const forged = { ...(await get(`${pathOf(auditLogRoute)}?check_id=${row.checkId}`)).json().entries[0], reason: 'scope_mismatch' };
        await editEntry(seq, { reason: 'scope_mismatch' }, await auditEntryHash(forged as AuditEntry));
      },
      () => verify(),
    );
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: seq + 1 });
  });

  it('a deleted row', async () => {
    const seq = await middle();
    const verdict = await whileTampered(
      () => db().delete(auditEntries).where(eq(auditEntries.seq, seq)),
      () => verify(),
    );
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: seq });
  });

  it('an inserted row (seqs after it shifted up)', async () => {
    const seq = await middle();
    const previous = await entryAt(seq - 1);
    const verdict = await whileTampered(
      async () => {
        await renumber(seq, await headSeq(), 1);
        const forged = {
          ...gateRecord({ decision: 'allow', action: 'authorized', reason: null, license_status: 'licensed' }),
          seq,
          recorded_at: new Date().toISOString(),
          prev_hash: previous.entryHash,
        };
        await db()
          .insert(auditEntries)
          .values({ entryJson: canonicalJson(forged), entryHash: await auditEntryHash(forged) });
      },
      () => verify(),
    );
    // The forged row links correctly to its predecessor; the chain breaks at the displaced original.
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: seq + 1 });
  });

  it('two rows swapped', async () => {
    const seq = await middle();
    const verdict = await whileTampered(
      async () => {
        await renumber(seq, seq, 1000);
        await renumber(seq + 1, seq + 1, -1);
        await renumber(seq + 1000, seq + 1000, -999);
      },
      () => verify(),
    );
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: seq });
  });

  it('a cut-off tail, against the newest signed checkpoint', async () => {
    await chain([gateRecord(), gateRecord()]);
    expect(await origin.audit.writeCheckpoint()).toBe(true);
    const head = await headSeq();
    const verdict = await whileTampered(
      () => db().execute(sql`delete from audit_entries where seq >= ${head - 1}`),
      () => verify(),
    );
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: head - 1 });
  });

  it('verifies a seq range from its predecessor', async () => {
    const seq = await middle();
    expect(await verify(`?from_seq=${seq}&to_seq=${seq + 2}`)).toMatchObject({ valid: true, entries: 3, first_invalid_seq: null });
    const verdict = await whileTampered(
      () => editEntry(seq + 1, { platform_name: 'Other' }),
      () => verify(`?from_seq=${seq}&to_seq=${seq + 2}`),
    );
    expect(verdict).toMatchObject({ valid: false, first_invalid_seq: seq + 1 });
  });

  it('is for admins', async () => {
    const owner = await loggedIn(origin);
    expect((await get(pathOf(auditVerifyRoute), bearer(owner.accessToken))).statusCode).toBe(403);
  });
});

describe('signed checkpoints', () => {
  it('signs the size and head; the published key verifies it', async () => {
    await chain([gateRecord()]);
    await origin.audit.writeCheckpoint();
    const latest = auditCheckpointSchema.parse((await get(pathOf(latestAuditCheckpointRoute), {})).json());
    const head = await headSeq();
    expect(latest).toMatchObject({ tree_size: head, head_hash: (await entryAt(head)).entryHash });
    const { keys } = (await get(pathOf(auditCheckpointKeysRoute), {})).json();
    const key = keys.find((candidate: { kid: string }) => candidate.kid === latest.key_id);
    expect(await verifyCheckpointSignature(latest.signature, key)).toEqual({
      tree_size: latest.tree_size,
      head_hash: latest.head_hash,
      signed_at: latest.signed_at,
    });
    const list = auditCheckpointListSchema.parse((await get(pathOf(auditCheckpointsRoute), {})).json());
    expect(list.checkpoints[0]).toEqual(latest);
    expect(await origin.audit.writeCheckpoint()).toBe(false);
  });
});

describe('GET /audit-log', () => {
  it('shows an owner the entries of their voices only; a deleted voice leaves them to admins', async () => {
    const owner = await loggedIn(origin);
    const other = await loggedIn(origin);
    const voiceId = await ownVoice(owner.userId);
    const otherVoice = await ownVoice(other.userId);
    const mine = gateRecord({ voice_id: voiceId });
    await chain([mine, gateRecord({ voice_id: otherVoice })]);

    const page = auditLogPageSchema.parse((await get(pathOf(auditLogRoute), bearer(owner.accessToken))).json());
    expect(page.entries.map((entry) => entry.check_id)).toEqual([mine.check_id]);

    await db().delete(voices).where(eq(voices.id, voiceId));
    expect(auditLogPageSchema.parse((await get(pathOf(auditLogRoute), bearer(owner.accessToken))).json()).entries).toEqual([]);
    const asAdmin = auditLogPageSchema.parse((await get(`${pathOf(auditLogRoute)}?voice_id=${voiceId}`)).json());
    expect(asAdmin.entries.map((entry) => entry.check_id)).toEqual([mine.check_id]);
  });

  it('shows a platform key the checks of its platform; a revoked key gets 401', async () => {
    const name = `Audit Platform ${randomUUID().slice(0, 8)}`;
    const key = await platformWithApiKey(origin, adminToken, name);
    const ours = gateRecord({ platform_name: name });
    await chain([ours, gateRecord({ platform_name: 'Someone Else' })]);

    const page = auditLogPageSchema.parse((await get(pathOf(auditLogRoute), { 'x-api-key': key.api_key })).json());
    expect(page.entries.map((entry) => entry.check_id)).toEqual([ours.check_id]);

    await origin.app.inject({
      method: 'DELETE',
      url: pathOf(revokeApiKeyRoute, { platform_id: key.platformId, key_id: key.key_id }),
      headers: bearer(adminToken),
    });
    expect((await get(pathOf(auditLogRoute), { 'x-api-key': key.api_key })).statusCode).toBe(401);
    expect((await get(pathOf(auditLogRoute), { 'x-api-key': 'vip_nonsense' })).statusCode).toBe(401);
  });

  it('needs credentials', async () => {
    const response = await get(pathOf(auditLogRoute), {});
    expect(response.statusCode).toBe(401);
  });

  it('pages by cursor and filters by decision and time', async () => {
    const voiceId = randomUUID();
    const started = origin.runtime.clock.now().toISOString();
    await chain([
      gateRecord({ voice_id: voiceId }),
      gateRecord({ voice_id: voiceId, decision: 'allow', action: 'authorized', reason: null, license_status: 'licensed' }),
      gateRecord({ voice_id: voiceId }),
      gateRecord({ voice_id: voiceId }),
      gateRecord({ voice_id: voiceId }),
    ]);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `${pathOf(auditLogRoute)}?voice_id=${voiceId}&limit=2${cursor ? `&cursor=${cursor}` : ''}`;
      const page = auditLogPageSchema.parse((await get(query)).json());
      expect(page.entries.length).toBeLessThanOrEqual(2);
      seen.push(...page.entries.map((entry) => entry.check_id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen).size).toBe(5);

    const allowed = auditLogPageSchema.parse((await get(`${pathOf(auditLogRoute)}?voice_id=${voiceId}&decision=allow`)).json());
    expect(allowed.entries).toHaveLength(1);
    const later = auditLogPageSchema.parse(
      (
        await get(
          `${pathOf(auditLogRoute)}?voice_id=${voiceId}&from=${encodeURIComponent(new Date(Date.parse(started) + 3_600_000).toISOString())}`,
        )
      ).json(),
    );
    expect(later.entries).toHaveLength(0);
    const since = auditLogPageSchema.parse(
      (await get(`${pathOf(auditLogRoute)}?voice_id=${voiceId}&from=${encodeURIComponent(started)}`)).json(),
    );
    expect(since.entries).toHaveLength(5);
  });

  it('refuses a cursor it did not issue', async () => {
    const response = await get(`${pathOf(auditLogRoute)}?cursor=bm9wZQ`);
    expect(response.statusCode).toBe(422);
    expect(response.json().errors).toEqual([{ field: 'query.cursor', message: 'unknown cursor' }]);
  });

  it('reads in decided_at order on request, paged and bounded on decided_at, while seq follows the appending', async () => {
    const voiceId = randomUUID();
    const at = (minutes: number) => new Date(Date.parse('2026-03-01T12:00:00.000Z') + minutes * 60_000).toISOString();
    // Appended in this order, as the edge's collector can deliver them: decided late, early, in between, tied.
    const decided = [at(30), at(10), at(20), at(10), at(40)];
    for (const decided_at of decided) await chain([gateRecord({ voice_id: voiceId, decided_at })]);

    const read = async (query: string) => {
      const response = await get(`${pathOf(auditLogRoute)}?voice_id=${voiceId}&${query}`);
      expect(response.statusCode).toBe(200);
      return auditLogPageSchema.parse(response.json());
    };
    const bySeq = (await read('limit=10')).entries;
    expect(bySeq.map((entry) => entry.decided_at)).toEqual(decided);
    expect(bySeq.map((entry) => entry.seq)).toEqual([...bySeq.map((entry) => entry.seq)].sort((a, b) => a - b));
    // recorded_at never precedes decided_at, and does not decrease with seq.
    for (const [i, entry] of bySeq.entries()) {
      expect(entry.recorded_at >= entry.decided_at).toBe(true);
      if (i > 0) expect(entry.recorded_at >= bySeq[i - 1]!.recorded_at).toBe(true);
    }

    // Two at a time in decided_at order: the tie at 12:10 is broken by seq, and no entry is seen twice.
    const seen: { decided_at: string; seq: number }[] = [];
    let cursor: string | null = null;
    do {
      const page = await read(`order=decided_at&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.entries);
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen.map((entry) => entry.decided_at)).toEqual([at(10), at(10), at(20), at(30), at(40)]);
    expect(seen[0]!.seq).toBeLessThan(seen[1]!.seq);

    // from/to bound decided_at in this order (recorded_at, now, would hold none of these entries).
    const window = await read(`order=decided_at&from=${encodeURIComponent(at(15))}&to=${encodeURIComponent(at(30))}`);
    expect(window.entries.map((entry) => entry.decided_at)).toEqual([at(20), at(30)]);

    // A cursor continues the order it was issued for only.
    const seqCursor = (await read('limit=1')).next_cursor!;
    const crossed = await get(`${pathOf(auditLogRoute)}?voice_id=${voiceId}&order=decided_at&cursor=${seqCursor}`);
    expect(crossed.statusCode).toBe(422);
    expect((await get(`${pathOf(auditLogRoute)}?order=recorded_at`)).statusCode).toBe(422);
  });

  it('says in its API description how seq, decided_at and recorded_at relate, and offers the decided_at order', async () => {
    const document = (await get('/openapi.json', {})).json();
    const entry = document.components.schemas.AuditEntry.properties;
    expect(entry.seq.description).toMatch(/recorded_at/);
    expect(entry.decided_at.description).toMatch(/later `seq` can carry an earlier `decided_at`/);
    expect(entry.recorded_at.description).toMatch(/never before `decided_at`/);
    const order = document.paths[auditLogRoute.path].get.parameters.find((p: { name: string }) => p.name === 'order');
    expect(order.schema.enum).toEqual(['seq', 'decided_at']);
  });
});
