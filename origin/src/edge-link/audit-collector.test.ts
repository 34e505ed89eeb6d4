import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { auditPullRequestSchema, type EdgeAuditRecord, INTERNAL_AUDIT_PULL_PATH, pathOf } from '@vip/shared-schema';
import { deleteVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { eq, inArray } from 'drizzle-orm';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { auditEntries, auditPending, domainEvents, voices, watermarkMarks } from '../db/schema.js';
import { gateRecord } from '../testing/audit-records.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { readSignedRequest } from '../testing/signed-request.js';
import { AuditCollector } from './audit-collector.js';

const SECRET = 'audit-collector-test-secret-0123';

/** The edge's pull route as the CallerHome implements it: pending until acknowledged, oldest first. */
class FakeEdge {
  pending: EdgeAuditRecord[] = [];
  /** Acknowledgements the edge "loses" (a dropped response): processed as if never sent. */
  loseNextAck = false;
  /** check_ids acknowledged before they were in the origin's database: must stay empty. */
  readonly prematureAcks: string[] = [];
  failNext = 0;
  private server: Server | null = null;
  url = '';

  constructor(private readonly isQueued: (checkIds: string[]) => Promise<Set<string>>) {}

  async start(): Promise<void> {
    this.server = createServer(async (request, response) => {
      const { body, verdict } = await readSignedRequest(request, SECRET);
      if (verdict !== 'ok' || request.url !== INTERNAL_AUDIT_PULL_PATH) return response.writeHead(401).end();
      if (this.failNext > 0) {
        this.failNext--;
        return response.writeHead(503).end();
      }
      const { ack, limit } = auditPullRequestSchema.parse(JSON.parse(body));
      const queued = await this.isQueued(ack);
      this.prematureAcks.push(...ack.filter((id) => !queued.has(id)));
      let acked = 0;
      if (this.loseNextAck) {
        this.loseNextAck = false;
      } else {
        const before = this.pending.length;
        this.pending = this.pending.filter((record) => !ack.includes(record.check_id));
        acked = before - this.pending.length;
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ acked, records: this.pending.slice(0, limit) }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise((resolve) => this.server?.close(resolve));
  }
}

let origin: TestOrigin;
let edge: FakeEdge;
beforeAll(async () => {
  origin = await startTestOrigin();
  edge = new FakeEdge(async (checkIds) => {
    if (checkIds.length === 0) return new Set();
    const db = origin.database.db;
    const pending = await db.select({ id: auditPending.checkId }).from(auditPending).where(inArray(auditPending.checkId, checkIds));
    const chained = await db.select({ id: auditEntries.checkId }).from(auditEntries).where(inArray(auditEntries.checkId, checkIds));
    return new Set([...pending, ...chained].map((row) => row.id));
  });
  await edge.start();
});
afterAll(async () => {
  await edge?.stop();
  await origin?.close();
});
beforeEach(() => {
  edge.pending = [];
  edge.failNext = 0;
});

const collector = () =>
  new AuditCollector({
    db: origin.database.db,
    edge: { url: edge.url, internalSecret: SECRET },
    clock: origin.runtime.clock,
    log: origin.app.log,
    batchSize: 3,
    retryBaseMs: 1,
  });

async function collectAll(worker: AuditCollector) {
  for (let round = 0; round < 50; round++) if ((await worker.collectOnce()) === 'idle') return;
  throw new Error('the collector never went idle');
}

const blockedEventsFor = async (checkId: string) =>
  (await origin.database.db.select().from(domainEvents).where(eq(domainEvents.eventType, 'pre_synthesis.blocked'))).filter(
    (event) => (event.payload as { check_id?: string }).check_id === checkId,
  );

/** An owner and a voice of theirs, as an enrollment leaves it. */
async function ownerWithVoice() {
  const owner = await loggedIn(origin);
  const voiceId = crypto.randomUUID();
  await origin.database.db
    .insert(voices)
    .values({ id: voiceId, ownerId: owner.userId, name: 'V', status: 'ready', model: 'test', speechSeconds: 12, quality: {} });
  return { owner, voiceId };
}

async function chained(checkIds: string[]) {
  while ((await origin.audit.appendPending()).more);
  return origin.database.db.select().from(auditEntries).where(inArray(auditEntries.checkId, checkIds));
}

describe('audit collector', () => {
  it('queues every pending edge record, acknowledging each only after it committed', async () => {
    const records = Array.from({ length: 7 }, () => gateRecord({ decision: 'allow', action: 'authorized', reason: null }));
    edge.pending = [...records];
    await collectAll(collector());
    expect(edge.pending).toEqual([]);
    expect(edge.prematureAcks).toEqual([]);
    expect(await chained(records.map((record) => record.check_id))).toHaveLength(7);
  });

  it('registers the watermark id handed over beside a redemption, and leaves it out of the chain entry', async () => {
    const redemption = gateRecord({
      kind: 'authorization.redeemed',
      decision: 'allow',
      action: 'redeemed',
      reason: null,
      token_jti: crypto.randomUUID(),
    });
    edge.pending = [{ ...redemption, watermark_id: 'abcdef0123' }];
    await collectAll(collector());
    const [mark] = await origin.database.db.select().from(watermarkMarks).where(eq(watermarkMarks.redemptionCheckId, redemption.check_id));
    expect(mark).toMatchObject({ watermarkId: 'abcdef0123', voiceId: redemption.voice_id, tokenJti: redemption.token_jti });
    const [entry] = await chained([redemption.check_id]);
    expect(entry!.entryJson).not.toContain('abcdef0123');
    expect(JSON.parse(entry!.entryJson)).not.toHaveProperty('watermark_id');
  });

  it('emits pre_synthesis.blocked once per denied check, for the voice owner', async () => {
    const { owner, voiceId } = await ownerWithVoice();
    const denial = gateRecord({ voice_id: voiceId, platform_name: 'Blocked Platform', intended_use: 'podcast', reason: 'scope_mismatch' });
    edge.pending = [denial, gateRecord({ decision: 'allow', action: 'authorized', reason: null })];
    await collectAll(collector());

    const events = await blockedEventsFor(denial.check_id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ ownerId: owner.userId, voiceId });
    expect(events[0]!.payload).toMatchObject({
      event: 'pre_synthesis.blocked',
      voice_id: voiceId,
      platform_name: 'Blocked Platform',
      intended_use: 'podcast',
      reason: 'scope_mismatch',
      check_id: denial.check_id,
      authorization_denied: true,
    });
  });

  it('emits pre_synthesis.blocked for the owner of a voice erased between the decision and the pull', async () => {
    const { owner, voiceId } = await ownerWithVoice();
    // The edge denied a check while the voice existed; its owner erases the voice before the origin pulls the record.
    const denial = gateRecord({ voice_id: voiceId.toUpperCase(), platform_name: 'Blocked Platform', reason: 'no_license' });
    const erased = await origin.app.inject({
      method: 'DELETE',
      url: pathOf(deleteVoiceRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
    });
    expect(erased.statusCode).toBe(200);
    edge.pending = [denial];
    await collectAll(collector());

    const [event] = await blockedEventsFor(denial.check_id);
    expect(event).toMatchObject({ ownerId: owner.userId, eventType: 'pre_synthesis.blocked' });
  });

  it('adds nothing when the same batch is pulled twice (the acknowledgement was lost)', async () => {
    const denial = gateRecord();
    const records = [denial, gateRecord(), gateRecord()];
    edge.pending = [...records];
    const worker = collector();
    await worker.collectOnce();
    edge.loseNextAck = true;
    await worker.collectOnce();
    await chained(records.map((record) => record.check_id));
    // A new collector process (restart) gets the same batch once more, after it was chained.
    edge.pending = [...records];
    await collectAll(collector());
    expect(await chained(records.map((record) => record.check_id))).toHaveLength(3);
    expect(await blockedEventsFor(denial.check_id)).toHaveLength(1);
    expect(edge.prematureAcks).toEqual([]);
  });

  it('keeps its acknowledgements through a failed pull and sends them on the next', async () => {
    const records = [gateRecord(), gateRecord()];
    edge.pending = [...records];
    const worker = collector();
    await worker.collectOnce();
    edge.failNext = 1;
    expect(await worker.collectOnce()).toEqual({ waitMs: expect.any(Number) });
    expect(edge.pending).toHaveLength(2);
    await collectAll(worker);
    expect(edge.pending).toEqual([]);
  });

  it('sends its last acknowledgement when stopped', async () => {
    edge.pending = [gateRecord()];
    const worker = collector();
    await worker.collectOnce();
    expect(edge.pending).toHaveLength(1);
    await worker.flushAcknowledgements();
    expect(edge.pending).toEqual([]);
  });
});
