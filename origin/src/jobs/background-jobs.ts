import type { FastifyBaseLogger } from 'fastify';
import type { AuditService } from '../audit/service.js';
import type { TransparencyLog } from '../audit/tlog-service.js';
import type { Database } from '../db/client.js';
import type { Clock } from '../runtime.js';
import type { SenderSettings } from '../webhooks/sender.js';
import { WebhookWorker } from '../webhooks/worker.js';
import { AuditCollector } from './audit-collector.js';
import { BackgroundLoop } from './background-loop.js';

export interface AuditAndWebhookJobsOptions {
  db: Database;
  clock: Clock;
  log: FastifyBaseLogger;
  audit: AuditService;
  tlog: TransparencyLog;
  /** Null: nothing to collect (no edge configured). */
  edge: { url: string; internalSecret: string } | null;
  checkpointIntervalMs: number;
  /** How often the transparency log's checkpoint is signed when the tree grew: the longest a new entry waits for a receipt. */
  tlogCheckpointIntervalMs: number;
  webhookSender: SenderSettings;
  retryScheduleSeconds: readonly number[];
}

/** How often idle loops look for work other processes (or other domains' transactions) committed. */
const APPEND_POLL_MS = 500;
const WEBHOOK_POLL_MS = 1_000;
const COLLECT_POLL_MS = 1_000;

/** The origin's background work around the audit chain and webhooks, one loop each; all state is in tables. */
export function createAuditAndWebhookJobs(options: AuditAndWebhookJobsOptions) {
  const { db, clock, log, audit } = options;
  const webhookWorker = new WebhookWorker({
    db,
    clock,
    log: log.child({ component: 'webhooks' }),
    sender: options.webhookSender,
    retrySchedule: options.retryScheduleSeconds,
  });
  // Nudged by the appender, so a new entry is signed for at once; never more often than the interval,
  // which also bounds how long entries appended by other origin processes wait.
  let lastSignedAt = Number.NEGATIVE_INFINITY;
  const tlogCheckpoints = new BackgroundLoop({
    name: 'tlog-checkpoints',
    round: async () => {
      const untilDue = lastSignedAt + options.tlogCheckpointIntervalMs - performance.now();
      if (untilDue > 0) return { waitMs: untilDue };
      if (await options.tlog.signCheckpoint()) lastSignedAt = performance.now();
      return 'idle';
    },
    idleMs: options.tlogCheckpointIntervalMs,
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
    idleMs: options.checkpointIntervalMs,
    log,
  });
  const collector = options.edge
    ? new AuditCollector({
        db,
        clock,
        edge: options.edge,
        log: log.child({ component: 'audit-collector' }),
        onQueued: () => {
          appender.nudge();
          webhooks.nudge();
        },
      })
    : null;
  const collecting = collector
    ? new BackgroundLoop({ name: 'audit-collector', round: () => collector.collectOnce(), idleMs: COLLECT_POLL_MS, log })
    : null;
  const loops = [appender, checkpoints, tlogCheckpoints, webhooks, ...(collecting ? [collecting] : [])];
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
