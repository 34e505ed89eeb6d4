import { randomInt } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { TILE_WIDTH, tilePath } from '@vip/shared-schema';
import { extendTree } from '../../origin/src/audit/appender.js';
import { createCheckpointSigner } from '../../origin/src/audit/checkpoints.js';
import { appendLeaves, edgeTiles, leafHash, tileKey } from '../../origin/src/audit/merkle.js';
import { queueAuditRecords } from '../../origin/src/audit/queue.js';
import { AuditService } from '../../origin/src/audit/service.js';
import { TransparencyLog } from '../../origin/src/audit/tlog-service.js';
import * as tlogStore from '../../origin/src/audit/tlog-store.js';
import { generateSigningJwk } from '../../origin/src/auth/access-tokens.js';
import type { Database, DatabaseHandle } from '../../origin/src/db/client.js';
import { systemRuntime } from '../../origin/src/runtime.js';
import { gateRecord } from '../../origin/src/testing/audit-records.js';
import { openScratchServerDatabase, openTestDatabase } from '../../origin/src/testing/database.js';
import { startTestOrigin, type TestOrigin } from '../../origin/src/testing/origin.js';
import type { Bench, Figure } from './bench.js';
import { measureLoad } from './support/load.js';
import { percentile, round } from './support/stats.js';

const ADMIN = { kind: 'admin' } as const;
const TLOG_CHECKPOINT_INTERVAL_MS = 250;
/** How often the bench looks for the entry, then for its receipt. */
const POLL_MS = 10;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cpuSeconds = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

/**
 * Appends through the appender, then the same entries added to an empty tree in another database
 * the way the appender does (batches of 1,000, one transaction each): the tree's share of the time.
 */
async function measureAppends(open: () => Promise<DatabaseHandle>, count: number) {
  const [chain, treeOnly] = [await open(), await open()];
  try {
    const audit = new AuditService({
      db: chain.db,
      clock: systemRuntime.clock,
      checkpoints: await createCheckpointSigner(await generateSigningJwk('bench')),
    });
    for (let i = 0; i < count; i += 1_000) {
      await queueAuditRecords(
        chain.db,
        Array.from({ length: Math.min(1_000, count - i) }, () => gateRecord()),
        new Date(),
      );
    }
    let started = performance.now();
    const cpuStarted = cpuSeconds();
    while ((await audit.appendPending()).more);
    const appendSeconds = (performance.now() - started) / 1000;
    const appendCpuSeconds = cpuSeconds() - cpuStarted;
    const leaves = await tlogStore.entryJsonsBetween(chain.db, 1, count);
    if ((await tlogStore.tlogState(chain.db)).treeSize !== count || leaves.length !== count)
      throw new Error('the tree did not grow with the chain');
    started = performance.now();
    for (let at = 0; at < count; at += 1_000) {
      await treeOnly.db.transaction((tx) => extendTree(tx, at, leaves.slice(at, at + 1_000)));
    }
    const treeSeconds = (performance.now() - started) / 1000;
    return { perSecond: count / appendSeconds, perCpuSecond: count / appendCpuSeconds, treeShare: treeSeconds / appendSeconds };
  } finally {
    await chain.close();
    await treeOnly.close();
  }
}

/**
 * With the origin's own background jobs running (appender, checkpoint signer every 250 ms) and
 * `backgroundPerSecond` other decisions queued meanwhile: how long from queueing a decision until
 * its receipt is served.
 */
async function decisionToReceipt(origin: TestOrigin, samples: number, backgroundPerSecond: number) {
  const jobs = origin.jobs!;
  jobs.start();
  let producing = true;
  const producer = (async () => {
    while (producing) {
      await queueAuditRecords(
        origin.database.db,
        Array.from({ length: backgroundPerSecond / 20 }, () => gateRecord()),
        new Date(),
      );
      await sleep(50);
    }
  })();
  const toReceipt: number[] = [];
  const appendedToReceipt: number[] = [];
  const chained = async (checkId: string) =>
    (await origin.audit.list(ADMIN, { check_id: checkId, order: 'seq', limit: 1 })).entries.length > 0;
  try {
    for (let i = 0; i < samples; i++) {
      const decision = gateRecord();
      const started = performance.now();
      await queueAuditRecords(origin.database.db, [decision], new Date());
      while (!(await chained(decision.check_id))) await sleep(POLL_MS);
      const appended = performance.now();
      for (;;) {
        try {
          await origin.tlog.receipt(ADMIN, decision.check_id);
          break;
        } catch {
          await sleep(POLL_MS);
        }
      }
      toReceipt.push(performance.now() - started);
      appendedToReceipt.push(performance.now() - appended);
    }
  } finally {
    producing = false;
    await producer;
    await jobs.stop();
  }
  return { toReceipt, appendedToReceipt };
}

/** A tree of `size` synthetic leaves written straight to the tiles, as the appender would have left it. */
async function writeTree(db: Database, size: number): Promise<void> {
  const stored = new Map<string, Uint8Array>();
  const chunk = 65_536;
  let root: Buffer = Buffer.alloc(0);
  for (let at = 0; at < size; at += chunk) {
    const edge = new Map(edgeTiles(at).map(({ level, index }) => [tileKey(level, index), stored.get(tileKey(level, index))!]));
    const leaves = Array.from({ length: Math.min(chunk, size - at) }, (_, i) => leafHash(`{"seq":${at + i + 1}}`));
    const appended = appendLeaves(edge, at, leaves);
    root = appended.root;
    const written = [...appended.written.values()];
    for (const tile of written) stored.set(tileKey(tile.level, tile.index), tile.hashes);
    for (let i = 0; i < written.length; i += 200) await tlogStore.writeTiles(db, written.slice(i, i + 200));
  }
  await tlogStore.setTreeHead(db, size, root);
}

async function proofMilliseconds(size: number, samples: number): Promise<number[]> {
  const handle = await openTestDatabase();
  try {
    await writeTree(handle.db, size);
    const checkpoints = await createCheckpointSigner(await generateSigningJwk('bench'));
    const tlog = new TransparencyLog({ db: handle.db, clock: systemRuntime.clock, checkpoints, origin: 'bench' });
    await tlog.inclusionProof(0, size);
    const times: number[] = [];
    for (let i = 0; i < samples; i++) {
      const started = performance.now();
      await tlog.inclusionProof(randomInt(size), size);
      times.push(performance.now() - started);
    }
    return times;
  } finally {
    await handle.close();
  }
}

/** p50 and p99 of `samples` as two figures; a goal applies to the p99. */
const percentiles = (key: string, label: string, samples: number[], digits: number, goal?: Figure['goal']): Figure[] => [
  { key: `${key}.p50`, label: `${label}, p50`, value: round(percentile(samples, 0.5), digits), unit: 'ms' },
  { key: `${key}.p99`, label: `${label}, p99`, value: round(percentile(samples, 0.99), digits), unit: 'ms', ...(goal ? { goal } : {}) },
];

const bench: Bench = {
  title: 'Transparency log: receipts, proofs and tiles (origin)',
  method:
    'Appends with the tree: records queued in audit_pending, drained by the appender in batches of 1,000 (chain entries and the Merkle tiles in one transaction); entries/s, on PGlite in-memory and on Postgres when TEST_DATABASE_URL names a server. Tree share: the same entries added to an empty tree in another database as the appender does it, divided by the append time. ' +
    `Decision to receipt: the origin's own jobs running (appender; tlog checkpoint signer nudged by it, at most every ${TLOG_CHECKPOINT_INTERVAL_MS} ms), 1,000 other decisions/s queued meanwhile; one decision queued at a time, then the log and the receipt route's logic asked every 10 ms; p50/p99 of queued → receipt served and of appended (in the chain) → receipt served. A gate decision reaches the origin's queue through the audit collector, which polls the edge every second: add up to 1 s for those. ` +
    'Proof generation: a tree of 1,000,000 leaves (100,000 with --quick, to stay within its two minutes) written as tiles, inclusion proofs for random leaves (the tiles read from the database and the path computed, as a receipt does). ' +
    'Tile serving: full level-0 tiles (8 KiB) over HTTP from the origin (Fastify, PGlite in-memory) to autocannon, 10 connections, in the same process.',
  async run({ quick }) {
    const chainSize = quick ? 5_000 : 50_000;
    const treeSize = quick ? 100_000 : 1_000_000;
    const notes = [
      `${chainSize} chain entries appended; tree of ${treeSize} leaves for proofs.`,
      `Load average at the start: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores; wall-clock figures on a shared machine scale with it.`,
    ];
    const figures: Figure[] = [];
    const targets: { key: string; label: string; open: () => Promise<DatabaseHandle> }[] = [
      { key: 'pglite', label: 'PGlite', open: () => openTestDatabase() },
    ];
    const serverUrl = process.env.TEST_DATABASE_URL;
    if (serverUrl) targets.push({ key: 'postgres', label: 'Postgres', open: () => openScratchServerDatabase(serverUrl, 'vip_bench') });
    else notes.push('Postgres skipped: TEST_DATABASE_URL is not set.');
    for (const target of targets) {
      const appends = await measureAppends(target.open, chainSize);
      figures.push(
        {
          key: `tlog.append.${target.key}`,
          label: `${target.label}: appends with the Merkle tree`,
          value: round(appends.perSecond, 0),
          unit: 'entries/s',
          goal: { atLeast: 2_000 },
        },
        {
          key: `tlog.append_per_cpu_second.${target.key}`,
          label: `${target.label}: appends with the tree per CPU-second of the bench process`,
          value: round(appends.perCpuSecond, 0),
          unit: 'entries/CPU-s',
        },
        {
          key: `tlog.append.tree_share.${target.key}`,
          label: `${target.label}: share of append time spent on the Merkle tree (same entries, side by side)`,
          value: round(appends.treeShare, 3),
          unit: 'ratio',
          better: 'lower',
        },
      );
    }
    // The origin's own background loops, as main.ts runs them (no edge: nothing to send or collect).
    const origin = await startTestOrigin({
      jobs: {
        edge: null,
        licenseExpiryIntervalMs: 3_600_000,
        auditCheckpointIntervalMs: 60_000,
        tlogCheckpointIntervalMs: TLOG_CHECKPOINT_INTERVAL_MS,
        webhookRetryScheduleSeconds: [0],
        webhookConcurrencyPerEndpoint: 8,
      },
    });
    try {
      for (let i = 0; i < chainSize; i += 1_000) {
        await queueAuditRecords(
          origin.database.db,
          Array.from({ length: 1_000 }, () => gateRecord()),
          new Date(),
        );
      }
      while ((await origin.audit.appendPending()).more);
      await origin.tlog.signCheckpoint();
      const { toReceipt, appendedToReceipt } = await decisionToReceipt(origin, quick ? 10 : 100, 1_000);
      const proofMs = await proofMilliseconds(treeSize, quick ? 200 : 2_000);

      const url = await origin.app.listen({ port: 0, host: '127.0.0.1' });
      const fullTiles = Math.floor((await tlogStore.tlogState(origin.database.db)).treeSize / TILE_WIDTH);
      const requests = Array.from({ length: fullTiles }, (_, index) => ({
        method: 'GET' as const,
        path: `/tlog/${tilePath(0, index, TILE_WIDTH)}`,
        headers: {},
      }));
      const tiles = await measureLoad(url, requests, { connections: 10, durationSeconds: quick ? 3 : 10 });

      figures.push(
        ...percentiles('tlog.receipt_latency', 'Decision queued at the origin to receipt available', toReceipt, 0),
        ...percentiles('tlog.checkpoint_latency', 'Entry appended to receipt available (signed checkpoint)', appendedToReceipt, 0, {
          atMost: 1_000,
        }),
        ...percentiles('tlog.proof', `Inclusion proof at ${treeSize.toLocaleString('en')} entries`, proofMs, 2),
        { key: 'tlog.tiles.throughput', label: 'Full tiles served over HTTP', value: round(tiles.requestsPerSecond, 0), unit: 'tiles/s' },
        { key: 'tlog.tiles.p99', label: 'Full tile, p99 under that load', value: tiles.p99Ms, unit: 'ms' },
      );
      return { figures, notes };
    } finally {
      await origin.close();
    }
  },
};

export default bench;
