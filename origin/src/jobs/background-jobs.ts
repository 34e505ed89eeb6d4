import type { FastifyBaseLogger } from 'fastify';
import type { AuditService } from '../audit/service.js';
import type { TransparencyLog } from '../audit/tlog-service.js';
import type { Database } from '../db/client.js';
import { AuditCollector } from '../edge-link/audit-collector.js';
import { EDGE_SYNC_IDLE_MS, OutboxSender } from '../edge-link/outbox-sender.js';
import { BackgroundLoop } from '../loops/background-loop.js';
import type { WakeSignal } from '../loops/wake-signal.js';
import { licenseExpiryRound } from '../registry/licenses/expiry.js';
import type { LicenseService } from '../registry/licenses/service.js';
import type { Clock } from '../runtime.js';
import type { SpokenConsentService } from '../spoken-consent/service.js';
import type { SenderSettings } from '../webhooks/sender.js';
import { WebhookWorker } from '../webhooks/worker.js';

/** How often each loop runs; main.ts takes them from the configuration. */
export interface BackgroundJobSettings {
  /** Null: nothing to send to the edge or collect from it (no edge configured); the outbox keeps its updates. */
  edge: { url: string; internalSecret: string } | null;
  licenseExpiryIntervalMs: number;
  auditCheckpointIntervalMs: number;
  /** Between two pulls of an idle edge; absent: COLLECT_POLL_MS. */
  auditCollectIntervalMs?: number;
  /** How often the transparency log's checkpoint is signed when the tree grew: the longest a new entry waits for a receipt. */
  tlogCheckpointIntervalMs: number;
  webhookRetryScheduleSeconds: readonly number[];
  /** WEBHOOK_CONCURRENCY: deliveries of one endpoint in flight at once. */
  webhookConcurrencyPerEndpoint: number;
}

export interface BackgroundJobDeps {
  db: Database;
  clock: Clock;
  log: FastifyBaseLogger;
  outbox: WakeSignal;
  audit: AuditService;
  tlog: TransparencyLog;
  licenses: LicenseService;
  spokenConsent: SpokenConsentService;
  webhookSender: SenderSettings;
  settings: BackgroundJobSettings;
}

export interface BackgroundJobs {
  start(): void;
  /** Waits for every round in flight, then for the deliveries and acknowledgements they started. */
  stop(): Promise<void>;
}

/** How often idle loops look for work other processes (or other domains' transactions) committed. */
const APPEND_POLL_MS = 500;
const WEBHOOK_POLL_MS = 1_000;
const COLLECT_POLL_MS = 1_000;

/**
 * Every background loop of the origin, each a `BackgroundLoop`: the edge sync sender, the licence
 * expiry job, the audit appender and checkpoint signers, the webhook worker and the audit collector.
 * All their state is in tables. Built by server.ts, started by main.ts, stopped when the app closes.
 */
export function createBackgroundJobs(deps: BackgroundJobDeps): BackgroundJobs {
  const { db, clock, log, audit, settings } = deps;
  const webhookWorker = new WebhookWorker({
    db,
    clock,
    log: log.child({ component: 'webhooks' }),
    sender: deps.webhookSender,
    retrySchedule: settings.webhookRetryScheduleSeconds,
    concurrencyPerEndpoint: settings.webhookConcurrencyPerEndpoint,
  });
  // Nudged by the appender, so a new entry is signed for at once; never more often than the interval,
  // which also bounds how long entries appended by other origin processes wait.
  let lastSignedAt = Number.NEGATIVE_INFINITY;
  const tlogCheckpoints = new BackgroundLoop({
    name: 'tlog-checkpoints',
    round: async () => {
      const untilDue = lastSignedAt + settings.tlogCheckpointIntervalMs - performance.now();
      if (untilDue > 0) return { waitMs: untilDue };
      if (await deps.tlog.signCheckpoint()) lastSignedAt = performance.now();
      return 'idle';
    },
    idleMs: settings.tlogCheckpointIntervalMs,
    log,
  });
  const webhooks = new BackgroundLoop({ name: 'webhooks', round: () => webhookWorker.round(), idleMs: WEBHOOK_POLL_MS, log });
  const appender = new BackgroundLoop({
    name: 'audit-appender',
    round: async () => {
      const { appended, more } = await audit.appendPending();
      if (appended > 0) tlogCheckpoints.nudge();
      return more ? 'busy' : 'idle';
    },
    idleMs: APPEND_POLL_MS,
    log,
  });
  const checkpoints = new BackgroundLoop({
    name: 'audit-checkpoints',
    round: async () => {
      await audit.writeCheckpoint();
      return 'idle';
    },
    idleMs: settings.auditCheckpointIntervalMs,
    log,
  });
  const licenseExpiry = new BackgroundLoop({
    name: 'license-expiry',
    round: licenseExpiryRound(deps.licenses, log.child({ component: 'license-expiry' })),
    idleMs: settings.licenseExpiryIntervalMs,
    errorBackoffMs: settings.licenseExpiryIntervalMs,
    log,
  });
  // Beside the licence expiry, at its interval: expired spoken-consent challenges are deleted.
  const challengeCleanup = new BackgroundLoop({
    name: 'consent-challenge-cleanup',
    round: async () => {
      const deleted = await deps.spokenConsent.deleteExpiredChallenges();
      if (deleted > 0) log.debug({ deleted }, 'expired consent challenges deleted');
      return 'idle';
    },
    idleMs: settings.licenseExpiryIntervalMs,
    errorBackoffMs: settings.licenseExpiryIntervalMs,
    log,
  });
  const edge = settings.edge;
  const sender = edge ? new OutboxSender({ db, edge, clock, log: log.child({ component: 'edge-sync' }) }) : null;
  const edgeSync = sender
    ? new BackgroundLoop({
        name: 'edge-sync',
        round: () => sender.sendDueBatch(),
        idleMs: EDGE_SYNC_IDLE_MS,
        errorBackoffMs: EDGE_SYNC_IDLE_MS,
        // Every transaction that writes to the outbox nudges it on commit.
        wake: deps.outbox,
        log,
      })
    : null;
  const collector = edge
    ? new AuditCollector({
        db,
        clock,
        edge,
        log: log.child({ component: 'audit-collector' }),
        onQueued: () => {
          appender.nudge();
          webhooks.nudge();
        },
      })
    : null;
  const collecting = collector
    ? new BackgroundLoop({
        name: 'audit-collector',
        round: () => collector.collectOnce(),
        idleMs: settings.auditCollectIntervalMs ?? COLLECT_POLL_MS,
        log,
      })
    : null;
  const loops = [
    ...(edgeSync ? [edgeSync] : []),
    licenseExpiry,
    challengeCleanup,
    appender,
    checkpoints,
    tlogCheckpoints,
    webhooks,
    ...(collecting ? [collecting] : []),
  ];
  return {
    start: () => {
      for (const loop of loops) loop.start();
    },
    stop: async () => {
      await Promise.all(loops.map((loop) => loop.stop()));
      await webhookWorker.drain();
      await collector?.flushAcknowledgements();
    },
  };
}
