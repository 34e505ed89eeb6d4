import { randomUUID } from 'node:crypto';
import {
  openNote,
  parseCheckpointText,
  parseNoteVerifierKey,
  parseTlogProof,
  pathOf,
  rfc6962LeafHash,
  sha256Hex,
  TILE_WIDTH,
  tilePath,
} from '@vip/shared-schema';
import { TlogFormatError, verifyReceipt } from '@vip/shared-schema/client';
import { authorizationAssertionOf } from '@vip/shared-schema/client/provenance';
import { auditLogRoute, auditReceiptRoute, auditReceiptSchema, auditVerifyRoute } from '@vip/shared-schema/routes/origin/audit';
import { eq, type SQL, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditTlogState, auditTlogTiles, voices } from '../db/schema.js';
import { gateRecord } from '../testing/audit-records.js';
import { bearer, loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin, UNHURRIED_JOBS } from '../testing/origin.js';
import { leafHash } from './merkle.js';
import { queueAuditRecords } from './queue.js';
import * as tlogStore from './tlog-store.js';

let origin: TestOrigin;
let adminToken: string;
let vkey: string;
beforeAll(async () => {
  origin = await startTestOrigin();
  adminToken = (await loggedIn(origin, 'admin')).accessToken;
  vkey = (await origin.app.inject({ method: 'GET', url: '/tlog/vkey' })).body;
});
afterAll(() => origin?.close());

const db = () => origin.database.db;
const get = (url: string, headers: Record<string, string> = bearer(adminToken)) => origin.app.inject({ method: 'GET', url, headers });

async function chain(records: ReturnType<typeof gateRecord>[]) {
  await queueAuditRecords(db(), records, origin.runtime.clock.now());
  while ((await origin.audit.appendPending()).more);
}

async function chainAndSign(records: ReturnType<typeof gateRecord>[]) {
  await chain(records);
  await origin.tlog.signCheckpoint();
}

/** Both drivers answer a raw query with { rows }. */
const rowsOf = async <T>(query: SQL) => ((await db().execute(query)) as unknown as { rows: T[] }).rows;

const receiptOf = (checkId: string, headers?: Record<string, string>) => get(pathOf(auditReceiptRoute, { check_id: checkId }), headers);

function expectProblem(response: Awaited<ReturnType<typeof get>>, status: number, code: string) {
  expect(response.statusCode).toBe(status);
  expect(response.headers['content-type']).toContain('application/problem+json');
  expect(response.json()).toMatchObject({ status, code });
  return response;
}

const platformKey = async (name: string) => (await platformWithApiKey(origin, adminToken, name)).api_key;

describe('checkpoints and the verifier key', () => {
  it('publishes a note verifier key named after the origin line, for the checkpoint key', async () => {
    const response = await get('/tlog/vkey', {});
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    const verifier = await parseNoteVerifierKey(response.body);
    expect(verifier.name).toBe('vip.local/audit');
    expect(Buffer.from(verifier.publicKey).toString('base64url')).toBe(origin.audit.checkpointKeys().keys[0]!.x);
  });

  it('signs a C2SP checkpoint of the tree the chain grew into, and signs again only when it grows', async () => {
    await chain([gateRecord(), gateRecord(), gateRecord()]);
    expect(await origin.tlog.signCheckpoint()).toBe(true);
    expect(await origin.tlog.signCheckpoint()).toBe(false);

    const response = await get('/tlog/checkpoint', {});
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-cache');
    const checkpoint = parseCheckpointText(await openNote(response.body, await parseNoteVerifierKey(vkey)));
    const { treeSize, rootHash } = await tlogStore.tlogState(db());
    expect(checkpoint).toEqual({ origin: 'vip.local/audit', size: treeSize, rootHash: new Uint8Array(rootHash) });
    const verdict = (await get(pathOf(auditVerifyRoute))).json();
    expect(verdict).toMatchObject({ valid: true, entries: treeSize });
  });

  it('refuses to sign when the stored tiles no longer extend the last signed tree', async () => {
    await chainAndSign([gateRecord()]);
    await chain([gateRecord()]);
    const [tile] = await db().select().from(auditTlogTiles).where(eq(auditTlogTiles.level, 0)).limit(1);
    const forged = Buffer.from(tile!.hashes);
    forged[0]! ^= 0xff;
    await db().update(auditTlogTiles).set({ hashes: forged }).where(eq(auditTlogTiles.index, tile!.index));
    try {
      const before = await tlogStore.tlogState(db());
      await expect(origin.tlog.signCheckpoint()).rejects.toThrow(/not signing/);
      expect((await tlogStore.tlogState(db())).signedNote).toBe(before.signedNote);
    } finally {
      await db().update(auditTlogTiles).set({ hashes: tile!.hashes }).where(eq(auditTlogTiles.index, tile!.index));
    }
    expect(await origin.tlog.signCheckpoint()).toBe(true);
  });
});

describe('receipts', () => {
  it('answers a receipt that verifies offline against the vkey, for the exact leaf bytes', async () => {
    const records = [gateRecord(), gateRecord(), gateRecord()];
    await chainAndSign(records);
    for (const record of records) {
      const response = await receiptOf(record.check_id);
      expect(response.statusCode).toBe(200);
      const receipt = auditReceiptSchema.parse(response.json());
      const entry = (await get(`${pathOf(auditLogRoute)}?check_id=${record.check_id}`)).json().entries[0];
      const { entry_hash: _hash, ...hashed } = entry;
      expect(JSON.parse(receipt.leaf)).toEqual(hashed);
      expect(receipt.index).toBe(entry.seq - 1);
      const verified = await verifyReceipt(receipt, vkey);
      expect(verified.entry.check_id).toBe(record.check_id);
      expect(parseTlogProof(receipt.proof).index).toBe(receipt.index);
    }
  });

  it("proves an approval's licence terms: the hash is in the leaf, the chain verifies, and the assertion built from the receipt carries it", async () => {
    const terms = await sha256Hex('the canonical terms of some licence');
    const approval = gateRecord({
      decision: 'allow',
      action: 'authorized',
      reason: null,
      license_status: 'licensed',
      token_jti: randomUUID(),
      license_terms_sha256: terms,
    });
    const refusal = gateRecord();
    await chainAndSign([approval, refusal]);
    const receipt = auditReceiptSchema.parse((await receiptOf(approval.check_id)).json());
    expect((await verifyReceipt(receipt, vkey)).entry.license_terms_sha256).toBe(terms);
    expect(authorizationAssertionOf({ check_id: approval.check_id, receipt }).license_terms_sha256).toBe(terms);
    // An entry without terms keeps the fields it always had.
    const refused = auditReceiptSchema.parse((await receiptOf(refusal.check_id)).json());
    expect(JSON.parse(refused.leaf)).not.toHaveProperty('license_terms_sha256');
    expect((await get(pathOf(auditVerifyRoute))).json()).toMatchObject({ valid: true });
  });

  it('is refused by the verifier for an edited leaf, another index, another key or another log', async () => {
    const record = gateRecord();
    await chainAndSign([record, gateRecord()]);
    const receipt = auditReceiptSchema.parse((await receiptOf(record.check_id)).json());
    const edited = receipt.leaf.replace('"deny"', '"allow"');
    expect(edited).not.toBe(receipt.leaf);
    await expect(verifyReceipt({ ...receipt, leaf: edited }, vkey)).rejects.toThrow(TlogFormatError);
    await expect(verifyReceipt({ ...receipt, index: receipt.index + 1 }, vkey)).rejects.toThrow(/index/);
    const proof = parseTlogProof(receipt.proof);
    const moved = receipt.proof.replace(`index ${proof.index}\n`, `index ${proof.index + 1}\n`);
    await expect(verifyReceipt({ ...receipt, index: receipt.index + 1, proof: moved }, vkey)).rejects.toThrow(TlogFormatError);
    const otherKey = vkey.replace(/\+[0-9a-f]{8}\+/, '+00000000+');
    await expect(verifyReceipt(receipt, otherKey)).rejects.toThrow(/key ID/);
    await expect(verifyReceipt(receipt, vkey, { origin: 'example.com/other' })).rejects.toThrow(/example.com\/other/);
  });

  it('answers receipt_pending with Retry-After until a signed checkpoint covers the entry, also while it is queued', async () => {
    const queued = gateRecord();
    await queueAuditRecords(db(), [queued], origin.runtime.clock.now());
    const whileQueued = expectProblem(await receiptOf(queued.check_id), 503, 'receipt_pending');
    expect(whileQueued.headers['retry-after']).toBe('1');
    while ((await origin.audit.appendPending()).more);
    expect(expectProblem(await receiptOf(queued.check_id), 503, 'receipt_pending').headers['retry-after']).toBe('1');
    await origin.tlog.signCheckpoint();
    expect((await receiptOf(queued.check_id)).statusCode).toBe(200);
  });

  it('answers 503 unavailable, not not_found, for a check it cannot find while the edge it would ask cannot be reached', async () => {
    // An edge that answers nothing: a port nobody listens on.
    const edge = { url: 'http://127.0.0.1:9', internalSecret: 'e'.repeat(32) };
    const withEdge = await startTestOrigin({ jobs: { ...UNHURRIED_JOBS, edge } });
    try {
      const admin = await loggedIn(withEdge, 'admin');
      const response = await withEdge.app.inject({
        method: 'GET',
        url: pathOf(auditReceiptRoute, { check_id: randomUUID() }),
        headers: bearer(admin.accessToken),
      });
      expectProblem(response, 503, 'unavailable');
      expect(response.headers['retry-after']).toBe('1');
    } finally {
      await withEdge.close();
    }
  });

  it('has the visibility of the entry: its platform and the voice owner see it, another platform and owner do not', async () => {
    const name = `Receipt Platform ${randomUUID()}`;
    const key = await platformKey(name);
    const otherKey = await platformKey(`Other ${randomUUID()}`);
    const owner = await loggedIn(origin, 'owner');
    const stranger = await loggedIn(origin, 'owner');
    const voiceId = randomUUID();
    await db()
      .insert(voices)
      .values({ id: voiceId, ownerId: owner.userId, name: 'Voice', status: 'ready', model: 'test', speechSeconds: 12, quality: {} });
    const record = gateRecord({ platform_name: name, voice_id: voiceId });
    const queuedElsewhere = gateRecord({ platform_name: 'Someone Else' });
    await chainAndSign([record]);
    await queueAuditRecords(db(), [queuedElsewhere], origin.runtime.clock.now());

    expect((await receiptOf(record.check_id, { 'x-api-key': key })).statusCode).toBe(200);
    expect((await receiptOf(record.check_id, bearer(owner.accessToken))).statusCode).toBe(200);
    expectProblem(await receiptOf(record.check_id, { 'x-api-key': otherKey }), 404, 'not_found');
    expectProblem(await receiptOf(record.check_id, bearer(stranger.accessToken)), 404, 'not_found');
    // Someone else's queued decision is as unknown as one that never happened.
    expectProblem(await receiptOf(queuedElsewhere.check_id, { 'x-api-key': key }), 404, 'not_found');
    expectProblem(await receiptOf(record.check_id, {}), 401, 'authentication_required');
    expectProblem(await receiptOf(record.check_id, { 'x-api-key': 'vip_nonsense' }), 401, 'invalid_credentials');
    expectProblem(await receiptOf(record.check_id, bearer('not.a.token')), 401, 'invalid_token');
    while ((await origin.audit.appendPending()).more);
  });

  it('refuses a check_id that is not a uuid, and names one never recorded as not found', async () => {
    const malformed = expectProblem(await receiptOf('not-a-uuid'), 422, 'validation_failed');
    expect(malformed.json().errors[0].field).toContain('check_id');
    expectProblem(await receiptOf(randomUUID()), 404, 'not_found');
  });
});

describe('tiles', () => {
  const tileUrl = (level: number, index: number, width: number) => `/tlog/tile/${tilePath(level, index, width).slice('tile/'.length)}`;

  it('serves level-0 hashes as the leaf hashes of the entries, immutable, for any width the tree reached', async () => {
    await chainAndSign([gateRecord(), gateRecord()]);
    const { treeSize } = await tlogStore.tlogState(db());
    const width = Math.min(treeSize, TILE_WIDTH - 1);
    const response = await get(tileUrl(0, 0, width), {});
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('application/octet-stream');
    expect(response.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(response.rawPayload.length).toBe(width * 32);
    const entries = await rowsOf<{ entry_json: string }>(sql`select entry_json from audit_entries where seq <= ${width} order by seq`);
    const leaves = entries.map((row) => leafHash(row.entry_json));
    expect(response.rawPayload.equals(Buffer.concat(leaves))).toBe(true);
    expect(Buffer.from(await rfc6962LeafHash(entries[0]!.entry_json)).equals(leaves[0]!)).toBe(true);
    // Narrower partial tiles are prefixes: what a client of an older checkpoint asks for.
    expect((await get(tileUrl(0, 0, 1), {})).rawPayload.equals(leaves[0]!)).toBe(true);
  });

  it('answers not_found for a tile or width the tree has not reached, without cache headers', async () => {
    const { treeSize } = await tlogStore.tlogState(db());
    const missing = expectProblem(await get(tileUrl(0, Math.floor(treeSize / TILE_WIDTH) + 1, 1), {}), 404, 'not_found');
    expect(missing.headers['cache-control']).toBeUndefined();
    if (treeSize < TILE_WIDTH) {
      expectProblem(await get(tileUrl(0, 0, TILE_WIDTH), {}), 404, 'not_found');
      expectProblem(await get(tileUrl(0, 0, treeSize + 1), {}), 404, 'not_found');
    }
    expectProblem(await get(tileUrl(5, 0, 1), {}), 404, 'not_found');
  });

  it.each([
    ['a level above 63', '64/000'],
    ['a level with a leading zero', '01/000'],
    ['an index not in 3-digit elements', '0/1'],
    ['an index with a needless element', '0/x000/001'],
    ['a width of 0', '0/000.p/0'],
    ['a width of 256 written as partial', '0/000.p/256'],
    ['a width with a leading zero', '0/000.p/05'],
    ['the entries bundle, which this log does not publish', 'entries/000'],
    ['a signed index', '0/-01'],
  ])('refuses %s as validation_failed', async (_what, path) => {
    const problem = expectProblem(await get(`/tlog/tile/${path}`, {}), 422, 'validation_failed');
    expect(problem.json().errors[0].field).toBe('params.tile');
  });
});

describe('the tree beside the chain', () => {
  it('adds entries chained before the tree existed before appending new ones, to the same root', async () => {
    await chainAndSign([gateRecord(), gateRecord()]);
    const before = await tlogStore.tlogState(db());
    const tiles = await db().select().from(auditTlogTiles);
    await db().delete(auditTlogTiles);
    await db()
      .update(auditTlogState)
      .set({ treeSize: 0, rootHash: Buffer.from('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', 'hex') });
    const late = gateRecord();
    await queueAuditRecords(db(), [late], origin.runtime.clock.now());
    expect(await origin.audit.appendPending()).toEqual({ appended: 0, more: true });
    expect((await tlogStore.tlogState(db())).rootHash.equals(before.rootHash)).toBe(true);
    expect(await db().select().from(auditTlogTiles)).toEqual(expect.arrayContaining(tiles));
    while ((await origin.audit.appendPending()).more);
    expect((await tlogStore.tlogState(db())).treeSize).toBe(before.treeSize + 1);
    expect(await origin.tlog.signCheckpoint()).toBe(true);
    await verifyReceipt(auditReceiptSchema.parse((await receiptOf(late.check_id)).json()), vkey);
  });

  it('refuses to append while entries the tree holds are missing from the chain', async () => {
    await chain([gateRecord()]);
    const { treeSize } = await tlogStore.tlogState(db());
    const [last] = await rowsOf<{ entry_json: string; entry_hash: string }>(
      sql`select entry_json, entry_hash from audit_entries where seq = ${treeSize}`,
    );
    await db().execute(sql`delete from audit_entries where seq = ${treeSize}`);
    try {
      await queueAuditRecords(db(), [gateRecord()], origin.runtime.clock.now());
      await expect(origin.audit.appendPending()).rejects.toThrow(/refusing to append/);
    } finally {
      await db().execute(sql`insert into audit_entries (entry_json, entry_hash) values (${last!.entry_json}, ${last!.entry_hash})`);
    }
    while ((await origin.audit.appendPending()).more);
  });
});
