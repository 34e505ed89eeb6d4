import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'drizzle-orm';
import { createCheckpointSigner } from '../../origin/src/audit/checkpoints.js';
import { queueAuditRecords } from '../../origin/src/audit/queue.js';
import { AuditService } from '../../origin/src/audit/service.js';
import { generateSigningJwk } from '../../origin/src/auth/access-tokens.js';
import type { DatabaseHandle } from '../../origin/src/db/client.js';
import { users, webhookEndpoints } from '../../origin/src/db/schema.js';
import { recordEvent } from '../../origin/src/events/store.js';
import { systemRuntime } from '../../origin/src/runtime.js';
import { gateRecord } from '../../origin/src/testing/audit-records.js';
import { webhookSettings } from '../../origin/src/webhooks/service.js';
import { WebhookWorker } from '../../origin/src/webhooks/worker.js';
import type { Bench, Figure } from './bench.js';
import { databaseTargets, loadNote } from './support/databases.js';
import { round } from './support/stats.js';

const record = () => gateRecord({ platform_name: 'Bench Platform' });

interface ChainFigures {
  appendsPerSecond: number;
  verifiedPerSecond: number;
  /** Per second of this process's CPU time: on a shared, loaded machine closer to what one free core does (PGlite runs in-process). */
  verifiedPerCpuSecond: number;
}

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/** Queues `count` records, times the appender draining them, then times a full verification. */
async function measureChain(handle: DatabaseHandle, count: number): Promise<ChainFigures> {
  const audit = new AuditService({
    db: handle.db,
    clock: systemRuntime.clock,
    checkpoints: await createCheckpointSigner(await generateSigningJwk('bench')),
  });
  for (let i = 0; i < count; i += 1_000) {
    await queueAuditRecords(handle.db, Array.from({ length: Math.min(1_000, count - i) }, record), new Date());
  }
  let started = performance.now();
  let appended = 0;
  for (;;) {
    const round = await audit.appendPending();
    appended += round.appended;
    if (!round.more) break;
  }
  const appendSeconds = (performance.now() - started) / 1000;
  // One whole verification first, untimed: it starts the hashing thread (about 0.5 s from TypeScript
  // sources), warms the code, and has Postgres set the hint bits of the rows just appended (the first
  // read of a row writes them), as in an origin verifying a chain that has settled.
  await audit.verify();
  started = performance.now();
  const cpuStarted = cpuSeconds();
  const verdict = await audit.verify();
  const verifySeconds = (performance.now() - started) / 1000;
  const verifyCpuSeconds = cpuSeconds() - cpuStarted;
  if (!verdict.valid || verdict.entries !== count || appended !== count) throw new Error(`chain of ${count} did not verify`);
  return {
    appendsPerSecond: count / appendSeconds,
    verifiedPerSecond: count / verifySeconds,
    verifiedPerCpuSecond: count / verifyCpuSeconds,
  };
}

/** Events fanned out to `endpoints` local endpoints, timed until every delivery is acknowledged. */
async function measureDeliveries(handle: DatabaseHandle, events: number, endpoints: number): Promise<number> {
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(204).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const port = (server.address() as AddressInfo).port;
    const adminId = randomUUID();
    await handle.db
      .insert(users)
      .values({ id: adminId, email: `${adminId}@bench`, passwordHash: 'x', role: 'admin', createdAt: new Date() });
    const { sender } = webhookSettings({ allowLoopback: true, gateVariant: 'A' });
    // Stored as the service stores them: encrypted, bound to their row.
    await handle.db.insert(webhookEndpoints).values(
      Array.from({ length: endpoints }, (_, index) => {
        const id = randomUUID();
        const secret = sender.secretEncryption.encrypt(`whsec_${randomBytes(24).toString('base64')}`, id);
        return {
          id,
          ownerId: adminId,
          url: `http://127.0.0.1:${port}/hook/${index}`,
          events: ['voice.deleted'],
          secret,
          createdAt: new Date(),
        };
      }),
    );
    for (let i = 0; i < events; i++) {
      const erased = { embeddings: 1, licenses: 0, consents: 1, edge_index: true };
      await recordEvent(handle.db, { type: 'voice.deleted', voiceId: randomUUID(), ownerId: null, fields: { erased } }, new Date());
    }
    const worker = new WebhookWorker({
      db: handle.db,
      clock: systemRuntime.clock,
      log: { warn: () => {}, info: () => {}, error: () => {} } as never,
      sender,
      retrySchedule: [0, 1],
      concurrencyPerEndpoint: 8,
      batchSize: 100,
    });
    const started = performance.now();
    // `idle` once nothing is pending; anything else means more is due now.
    while ((await worker.round()) !== 'idle');
    const seconds = (performance.now() - started) / 1000;
    const [row] = (
      (await handle.db.execute(sql`select count(*)::int as delivered from webhook_deliveries where status = 'delivered'`)) as unknown as {
        rows: { delivered: number }[];
      }
    ).rows;
    if (row?.delivered !== events * endpoints) throw new Error(`${row?.delivered} of ${events * endpoints} deliveries made`);
    return (events * endpoints) / seconds;
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const bench: Bench = {
  title: 'Audit chain and webhooks (origin)',
  method:
    'Appends: records queued in audit_pending, then the appender drains them in batches of 1,000 (one transaction each, under the chain lock); ' +
    "appends/s = records / drain time. Verification: GET …/verify logic over the whole chain, the second of two runs (the first starts the hashing thread and lets Postgres set hint bits on the rows just appended; pages of 5,000 seqs, each read as one text of stored entry JSON, three read ahead; SHA-256 per entry on the origin's hashing thread). " +
    'Deliveries: events fanned out to 20 local endpoints (up to 8 in flight per endpoint, WEBHOOK_CONCURRENCY), a receiver answering 204; ' +
    'deliveries/s until all are acknowledged. PGlite in-memory; Postgres when TEST_DATABASE_URL names a server (through the Neon driver).',
  async run({ quick }) {
    const chainSize = quick ? 5_000 : 50_000;
    const events = quick ? 50 : 250;
    const figures: Figure[] = [];
    const notes: string[] = [`${chainSize} chain entries per database; ${events} events × 20 endpoints.`, loadNote()];
    const targets = databaseTargets(notes);
    for (const target of targets) {
      const handle = await target.open();
      try {
        const chain = await measureChain(handle, chainSize);
        const deliveries = await measureDeliveries(handle, events, 20);
        figures.push(
          {
            key: `audit.append.${target.key}`,
            label: `${target.label}: sustained appends`,
            value: round(chain.appendsPerSecond, 0),
            unit: 'entries/s',
            goal: { atLeast: 2_000 },
          },
          {
            key: `audit.verify.${target.key}`,
            label: `${target.label}: chain verification`,
            value: round(chain.verifiedPerSecond, 0),
            unit: 'entries/s',
            goal: { atLeast: 200_000 },
          },
          {
            key: `audit.verify_per_cpu_second.${target.key}`,
            label: `${target.label}: chain verification per CPU-second of the origin process`,
            value: round(chain.verifiedPerCpuSecond, 0),
            unit: 'entries/CPU-s',
          },
          {
            key: `webhooks.deliveries.${target.key}`,
            label: `${target.label}: webhook deliveries`,
            value: round(deliveries, 0),
            unit: 'deliveries/s',
          },
        );
      } finally {
        await handle.close();
      }
    }
    return { figures, notes };
  },
};

export default bench;
