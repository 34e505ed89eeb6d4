import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { eq } from 'drizzle-orm';
import { loadConfig } from '../../origin/src/config.js';
import type { DatabaseHandle } from '../../origin/src/db/client.js';
import { domainEvents, users, webhookDeliveries, webhookEndpoints } from '../../origin/src/db/schema.js';
import { type NewEvent, recordEvent } from '../../origin/src/events/store.js';
import { BackgroundLoop } from '../../origin/src/loops/background-loop.js';
import { systemRuntime } from '../../origin/src/runtime.js';
import { webhookSettings } from '../../origin/src/webhooks/service.js';
import { WebhookWorker } from '../../origin/src/webhooks/worker.js';
import type { Bench, Figure } from './bench.js';
import { databaseTargets, loadNote } from './support/databases.js';
import { percentile, round } from './support/stats.js';

/** The origin's defaults: WEBHOOK_CONCURRENCY and the webhook loop's idle poll (jobs/background-jobs.ts). */
const CONCURRENCY = loadConfig({}).webhooks.concurrencyPerEndpoint;
const IDLE_POLL_MS = 1_000;
/** A short schedule, so a refused delivery comes back within seconds (WEBHOOK_RETRY_SCHEDULE=0,1,1,1,1,1). */
const RETRY_SCHEDULE = [0, 1, 1, 1, 1, 1];
const RATE_PER_SECOND = 50;
const REFUSED_SHARE = 0.1;
/** Half the events are state changes of these many voices (ordered per voice), half `pre_synthesis.blocked` reports. */
const VOICES = 50;

const silentLog = { warn: () => {}, info: () => {}, error: () => {}, debug: () => {}, child: () => silentLog } as never;

/** A local receiver: refuses a share of requests with 500 (seeded, so runs compare), times each event's first 2xx. */
async function startReceiver(refusedShare: number) {
  let seed = 31;
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const deliveredAt = new Map<string, number>();
  let requests = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests++;
      if (random() < refusedShare) return response.writeHead(500).end();
      const id = String(request.headers['webhook-id']);
      if (!deliveredAt.has(id)) deliveredAt.set(id, performance.now());
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveredAt,
    requests: () => requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** How the origin sends: its secrets' key is this process's, the same for every endpoint of the bench. */
const { sender } = webhookSettings({ allowLoopback: true, gateVariant: 'A' });

/** The one endpoint of a measurement (the last one's is deleted): an administrator's, for both kinds of event, its secret stored as the service stores it. */
async function registerEndpoint(handle: DatabaseHandle, url: string) {
  await handle.db.delete(webhookEndpoints);
  const adminId = randomUUID();
  await handle.db.insert(users).values({ id: adminId, email: `${adminId}@bench`, passwordHash: 'x', role: 'admin', createdAt: new Date() });
  const id = randomUUID();
  await handle.db.insert(webhookEndpoints).values({
    id,
    ownerId: adminId,
    url,
    events: ['pre_synthesis.blocked', 'license.renewed'],
    secret: sender.secretEncryption.encrypt(`whsec_${randomBytes(24).toString('base64')}`, id),
    createdAt: new Date(),
  });
  return { endpointId: id };
}

const voiceIds = Array.from({ length: VOICES }, () => randomUUID());
/** Event i: a blocked check on every other one, a licence renewal of one of the voices between. */
/** Half blocks (delivered independently), half licence renewals (in order per voice), with the fields each carries. */
const eventAt = (i: number): NewEvent => {
  const voiceId = voiceIds[Math.floor(i / 2) % VOICES]!;
  const platform_name = 'Bench Platform';
  return i % 2 === 0
    ? {
        type: 'pre_synthesis.blocked',
        voiceId,
        ownerId: null,
        fields: { platform_name, intended_use: 'audiobook', reason: 'no_license', check_id: randomUUID(), authorization_denied: true },
      }
    : {
        type: 'license.renewed',
        voiceId,
        ownerId: null,
        fields: { license_id: randomUUID(), platform_name, expires_at: '2027-06-30T00:00:00.000Z' },
      };
};

/** The origin's webhook loop as background-jobs.ts builds it; `nudge` as the audit collector nudges it on new events. */
function startLoop(handle: DatabaseHandle) {
  const worker = new WebhookWorker({
    db: handle.db,
    clock: systemRuntime.clock,
    log: silentLog,
    sender,
    retrySchedule: RETRY_SCHEDULE,
    concurrencyPerEndpoint: CONCURRENCY,
  });
  const loop = new BackgroundLoop({ name: 'webhooks', round: () => worker.round(), idleMs: IDLE_POLL_MS, log: silentLog });
  loop.start();
  return {
    nudge: () => loop.nudge(),
    stop: async () => {
      await loop.stop();
      await worker.drain();
    },
  };
}

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * `count` events committed before the worker starts; events/s from its start until the receiver has
 * every one, per wall-clock second and per second of this process's CPU time (on a shared, loaded
 * machine closer to what one free core does; with PGlite the database runs in this process too).
 */
async function measureThroughput(handle: DatabaseHandle, count: number): Promise<{ perSecond: number; perCpuSecond: number }> {
  const receiver = await startReceiver(0);
  try {
    await registerEndpoint(handle, receiver.url);
    for (let i = 0; i < count; i += 500) {
      const now = new Date();
      await handle.db.insert(domainEvents).values(
        Array.from({ length: Math.min(500, count - i) }, (_, j) => {
          const { type, voiceId, fields } = eventAt(i + j);
          return {
            eventType: type,
            voiceId,
            ownerId: null,
            payload: { event: type, voice_id: voiceId, timestamp: now.toISOString(), ...fields },
            occurredAt: now,
          };
        }),
      );
    }
    const started = performance.now();
    const cpuAtStart = cpuSeconds();
    const loop = startLoop(handle);
    let cpu: number;
    try {
      while (receiver.deliveredAt.size < count) await new Promise((resolve) => setTimeout(resolve, 20));
      cpu = cpuSeconds() - cpuAtStart;
    } finally {
      await loop.stop();
    }
    return { perSecond: count / ((Math.max(...receiver.deliveredAt.values()) - started) / 1000), perCpuSecond: count / cpu };
  } finally {
    await receiver.close();
  }
}

interface LagFigures {
  p50: number;
  p99: number;
  max: number;
  events: number;
  /** Not delivered when the bench stopped waiting: counted with the time waited, a lower bound of their lag. */
  undelivered: number;
  requests: number;
}

/** How long the lag run waits for the last events after the load stops. */
const DRAIN_MS = 60_000;

/** Events committed at a steady `RATE_PER_SECOND` for `seconds`, a share refused; lag = first 2xx at the receiver − commit. */
async function measureLag(handle: DatabaseHandle, seconds: number): Promise<LagFigures> {
  const receiver = await startReceiver(REFUSED_SHARE);
  try {
    const { endpointId } = await registerEndpoint(handle, receiver.url);
    const loop = startLoop(handle);
    const committedAt = new Map<number, number>();
    const messageOf = new Map<number, string>();
    try {
      const count = seconds * RATE_PER_SECOND;
      const started = performance.now();
      for (let i = 0; i < count; i++) {
        const dueAt = started + (i * 1000) / RATE_PER_SECOND;
        const wait = dueAt - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        const id = await recordEvent(handle.db, eventAt(i), new Date());
        committedAt.set(id, performance.now());
        loop.nudge();
      }
      // Every event reaches the receiver in the end; give the last retries their time.
      const deadline = performance.now() + DRAIN_MS;
      while (receiver.deliveredAt.size < count && performance.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await loop.stop();
    }
    const rows = await handle.db
      .select({ eventId: webhookDeliveries.eventId, messageId: webhookDeliveries.messageId })
      .from(webhookDeliveries)
      .where(eq(webhookDeliveries.endpointId, endpointId));
    for (const row of rows) if (row.eventId !== null) messageOf.set(row.eventId, row.messageId);
    const stoppedAt = performance.now();
    const lags = [...committedAt].map(([eventId, at]) => (receiver.deliveredAt.get(messageOf.get(eventId) ?? '') ?? stoppedAt) - at);
    return {
      p50: percentile(lags, 0.5),
      p99: percentile(lags, 0.99),
      max: Math.max(...lags),
      events: lags.length,
      undelivered: lags.length - receiver.deliveredAt.size,
      requests: receiver.requests(),
    };
  } finally {
    await receiver.close();
  }
}

const bench: Bench = {
  title: 'Webhook delivery to one endpoint (origin)',
  method:
    `One administrator's endpoint subscribed to \`pre_synthesis.blocked\` and \`license.renewed\`, a local receiver on 127.0.0.1; the events alternate between a blocked check (delivered independently) and a licence renewal of one of ${VOICES} voices (one voice's in order). ` +
    `The origin's webhook loop as it runs in production: WEBHOOK_CONCURRENCY=${CONCURRENCY} (the default), idle poll ${IDLE_POLL_MS} ms, nudged on each event as the audit collector nudges it. ` +
    'Throughput: events committed beforehand, events/s from the loop starting until the receiver has answered 2xx to every one (fan-out included). ' +
    `Lag: ${RATE_PER_SECOND} events/s committed one by one, the receiver answering 500 to ${REFUSED_SHARE * 100} % of requests at random, WEBHOOK_RETRY_SCHEDULE=${RETRY_SCHEDULE.join(',')} with the default ±10 % jitter; ` +
    "lag = the receiver's first 2xx for the event − the event's commit. PGlite in-memory; Postgres when TEST_DATABASE_URL names a server.",
  async run({ quick }) {
    const throughputEvents = quick ? 500 : 3_000;
    const lagSeconds = quick ? 8 : 30;
    const figures: Figure[] = [];
    const notes: string[] = [
      `Throughput over ${throughputEvents} events; lag over ${lagSeconds} s (${lagSeconds * RATE_PER_SECOND} events).`,
      loadNote(),
    ];
    const targets = databaseTargets(notes);
    for (const target of targets) {
      const handle = await target.open();
      try {
        const throughput = await measureThroughput(handle, throughputEvents);
        const lag = await measureLag(handle, lagSeconds);
        figures.push(
          {
            key: `webhooks.${target.key}.events_per_s`,
            label: `${target.label}: events delivered per second to one endpoint`,
            value: round(throughput.perSecond, 0),
            unit: 'events/s',
            goal: { atLeast: 100 },
          },
          {
            key: `webhooks.${target.key}.events_per_cpu_s`,
            label: `${target.label}: events delivered per second of the origin process's CPU time`,
            value: round(throughput.perCpuSecond, 0),
            unit: 'events/s',
          },
          {
            key: `webhooks.${target.key}.lag_p50_ms`,
            label: `${target.label}: lag p50 at ${RATE_PER_SECOND}/s, ${REFUSED_SHARE * 100} % refused`,
            value: round(lag.p50, 0),
            unit: 'ms',
          },
          {
            key: `webhooks.${target.key}.lag_p99_ms`,
            label: `${target.label}: lag p99 at ${RATE_PER_SECOND}/s, ${REFUSED_SHARE * 100} % refused`,
            value: round(lag.p99, 0),
            unit: 'ms',
            goal: { atMost: 5_000 },
          },
        );
        notes.push(
          `${target.label}: lag max ${round(lag.max, 0)} ms; ${lag.events} events, ${lag.requests} requests (${round((lag.requests / lag.events - 1) * 100, 1)} % retries); ${lag.undelivered} not delivered ${DRAIN_MS / 1000} s after the load stopped (counted with the time waited).`,
        );
      } finally {
        await handle.close();
      }
    }
    return { figures, notes };
  },
};

export default bench;
