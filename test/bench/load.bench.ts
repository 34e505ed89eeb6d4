import { type ChildProcess, spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type SyncUpdate, sha256Hex, type VoiceIndexRecord } from '@vip/shared-schema';
import autocannon from 'autocannon';
import { freePort } from '../../launch/free-port.js';
import { repositoryRoot } from '../support/repository.js';
import type { Bench, Figure } from './bench.js';
import { type Caller, fetchOnceMore, gateRequest, syncIndex } from './support/gate-index.js';
import type { LoadRequest } from './support/load.js';
import { median, round } from './support/stats.js';
import { type ServedWorker, serveWorker } from './support/workers.js';

/*
 * Issue 7: "the gate for 5 minutes at 80% of its measured capacity with no errors and flat memory".
 * The gate (production bundle on workerd, as gate.bench.ts serves it) with the origin beside it,
 * collecting the audit records every decision leaves at the edge, so both planes run as in
 * production and neither backlog is left to pile up unseen.
 */

/**
 * Many platforms (one API key each) over many voices, as an edge sees traffic. The gate keeps its
 * default limit (1,000 a minute per key): 256 keys admit over 4,000 requests a second in all, far
 * above what this machine serves, so the limiter counts every request and never refuses one.
 */
const CALLERS = 256;
const CAPACITY_CONNECTIONS = 16;
/** Enough to hold the rate while answers queue: rate × latency stays well under this. */
const PACED_CONNECTIONS = 64;
const LOAD_FRACTION = 0.8;
/** Memory is flat when the last window's mean RSS is at most this much above the second window's. */
const FLAT_TOLERANCE = 0.1;

interface Settings {
  warmupSeconds: number;
  capacitySeconds: number;
  /** The paced run, in equal segments, each with its own latency figures. */
  segments: number;
  segmentSeconds: number;
  sampleEverySeconds: number;
  /** Start the origin beside the gate (its start-up alone takes a good part of the quick budget). */
  withOrigin: boolean;
}

const FULL: Settings = {
  warmupSeconds: 10,
  capacitySeconds: 20,
  segments: 5,
  segmentSeconds: 60,
  sampleEverySeconds: 10,
  withOrigin: true,
};
const QUICK: Settings = { warmupSeconds: 2, capacitySeconds: 4, segments: 2, segmentSeconds: 10, sampleEverySeconds: 2, withOrigin: false };

/** Keys, and per caller a voice it may use (approved) and one it holds no licence for (blocked). */
async function seed(gateUrl: string, internalSecret: string): Promise<{ approved: LoadRequest[]; blocked: LoadRequest[] }> {
  let version = Date.now();
  const callers: Caller[] = Array.from({ length: CALLERS }, (_, index) => ({
    apiKey: `vip_${randomBytes(16).toString('hex')}`,
    platform: `Load TTS ${index}`,
  }));
  const updates: SyncUpdate[] = [];
  const voice = (licenses: VoiceIndexRecord['licenses']) => {
    const voiceId = randomUUID();
    updates.push({
      kind: 'voice',
      voice_id: voiceId,
      version: ++version,
      record: { voice_id: voiceId, owner_id: randomUUID(), consent_status: 'active', licenses },
    });
    return voiceId;
  };
  const approved: LoadRequest[] = [];
  const blocked: LoadRequest[] = [];
  for (const caller of callers) {
    updates.push({
      kind: 'api_key',
      key_hash: await sha256Hex(caller.apiKey),
      version: ++version,
      record: { key_id: randomUUID(), platform_id: randomUUID(), platform_name: caller.platform, revoked: false },
    });
    const licence = {
      license_id: randomUUID(),
      platform_name: caller.platform,
      scopes: ['audiobook' as const],
      expires_at: new Date(Date.now() + 86_400_000).toISOString(),
      status: 'active' as const,
      token_hash: await sha256Hex(randomUUID()),
    };
    approved.push(gateRequest(caller, voice([licence])));
    blocked.push(gateRequest(caller, voice([])));
  }
  await syncIndex(gateUrl, internalSecret, updates);
  return { approved, blocked };
}

/** Each request is checked once for the answer it is meant to get before any load is measured. */
async function confirm(gateUrl: string, request: LoadRequest, expected: (body: Record<string, unknown>) => boolean, label: string) {
  const response = await fetchOnceMore(`${gateUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
  });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200 || !expected(body)) throw new Error(`${label}: unexpected answer ${response.status} ${JSON.stringify(body)}`);
}

interface Origin {
  url: string;
  pid: number | undefined;
  adminPassword: string;
  stop(): Promise<void>;
}

/**
 * The origin as `npm start` runs it (PGlite in a fresh data folder), wired to this edge: its audit
 * collector pulls the decisions the load leaves in the edge's caller homes and appends them to the chain.
 * Started as one node process (tsx as an import hook), so its RSS is that process's.
 */
async function startOrigin(edgeUrl: string, internalSecret: string): Promise<Origin> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'vip-bench-origin-'));
  const adminPassword = randomBytes(12).toString('base64url');
  const jwk = (kid: string) => JSON.stringify({ ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid });
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', join(repositoryRoot, 'origin/src/main.ts')], {
    cwd: repositoryRoot,
    env: {
      ...process.env,
      ORIGIN_PORT: String(port),
      DATA_DIR: dataDir,
      EDGE_URL: edgeUrl,
      INTERNAL_SECRET: internalSecret,
      JWT_PRIVATE_JWK: jwk('bench-origin'),
      CHECKPOINT_PRIVATE_JWK: jwk('bench-checkpoint'),
      ADMIN_PASSWORD: adminPassword,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      if ((await fetch(`${url}/openapi.json`)).ok) return { url, pid: child.pid, adminPassword, stop };
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await stop();
  throw new Error(`the origin did not start:\n${errors}`);
}

/** Resident set size of a process in MiB, from /proc/<pid>/status; undefined where it cannot tell. */
function rssMib(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const line = readFileSync(`/proc/${pid}/status`, 'utf8')
      .split('\n')
      .find((row) => row.startsWith('VmRSS:'));
    return line ? Number(line.split(/\s+/)[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

interface Sample {
  atSeconds: number;
  workerd?: number;
  origin?: number;
}

interface Segment {
  requests: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

async function cannon(url: string, requests: LoadRequest[], options: { connections: number; seconds: number; rate?: number }) {
  return autocannon({
    url,
    connections: options.connections,
    duration: options.seconds,
    requests,
    ...(options.rate === undefined ? {} : { overallRate: options.rate }),
  });
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;

/** Least-squares slope of RSS against time, in MiB per minute. */
function slopePerMinute(points: { x: number; y: number }[]): number {
  const mx = mean(points.map((p) => p.x));
  const my = mean(points.map((p) => p.y));
  const sxx = points.reduce((sum, p) => sum + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : (points.reduce((sum, p) => sum + (p.x - mx) * (p.y - my), 0) / sxx) * 60;
}

/**
 * RSS figures of one process: first, last, max, and the flatness check. The windows are fifths of
 * the paced run (for the 5-minute run: minute 2 against minute 5); the first fifth is left out as
 * warm-up (compiled code, caches, the chain's first pages).
 */
function memoryFigures(name: 'workerd' | 'origin', label: string, samples: Sample[], runSeconds: number): Figure[] {
  const points = samples.flatMap((sample) => (sample[name] === undefined ? [] : [{ x: sample.atSeconds, y: sample[name]! }]));
  if (points.length < 3) return [];
  const fifth = runSeconds / 5;
  const window = (from: number, to: number) => points.filter((p) => p.x >= from && p.x <= to).map((p) => p.y);
  const second = window(fifth, 2 * fifth);
  const last = window(4 * fifth, runSeconds + 1);
  const growth = second.length && last.length ? mean(last) / mean(second) : Number.NaN;
  const figures: Figure[] = [
    { key: `load.${name}.rss_first`, label: `${label} RSS, first sample`, value: round(points[0]!.y, 1), unit: 'MiB' },
    { key: `load.${name}.rss_last`, label: `${label} RSS, last sample`, value: round(points.at(-1)!.y, 1), unit: 'MiB' },
    { key: `load.${name}.rss_max`, label: `${label} RSS, max`, value: round(Math.max(...points.map((p) => p.y)), 1), unit: 'MiB' },
    {
      key: `load.${name}.rss_slope_after_warmup`,
      label: `${label} RSS slope after the first fifth`,
      value: round(slopePerMinute(points.filter((p) => p.x >= fifth)), 2),
      unit: 'MiB/min',
    },
  ];
  if (Number.isFinite(growth)) {
    figures.push({
      key: `load.${name}.rss_last_over_second_window`,
      label: `${label} RSS: mean of the last fifth / mean of the second fifth (flat: ≤ ${1 + FLAT_TOLERANCE})`,
      value: round(growth, 3),
      unit: 'ratio',
      goal: { atMost: 1 + FLAT_TOLERANCE },
    });
  }
  return figures;
}

/** Audit entries the origin's chain holds, through the admin's view of GET …/audit-log/verify. */
async function chainEntries(origin: Origin): Promise<number | undefined> {
  try {
    const login = await fetch(`${origin.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'admin@vip.local', password: origin.adminPassword }),
    });
    const { access_token } = (await login.json()) as { access_token: string };
    const verdict = await fetch(`${origin.url}/api/v1/protect/audit-log/verify`, { headers: { authorization: `Bearer ${access_token}` } });
    const body = (await verdict.json()) as { entries?: number; valid?: boolean };
    return body.valid === false ? Number.NaN : body.entries;
  } catch {
    return undefined;
  }
}

const bench: Bench = {
  title: 'Gate under sustained load: 5 minutes at 80% of measured capacity (issue 7)',
  method: [
    'The gate Worker is served as in gate.bench.ts (the `wrangler deploy --dry-run` bundle on workerd through Miniflare, storage on',
    'tmpfs); the origin runs beside it as `npm start` runs it (PGlite, fresh data folder), wired to the edge, so its audit collector',
    `pulls and chains every decision the load makes. Traffic: ${CALLERS} platforms (one API key each, the default limit of 1,000 a`,
    'minute per key, which this traffic never reaches) and per platform one voice it holds a licence for and one it does not, sent',
    'alternately: half approvals (a token issued by VoiceGate), half blocked (`no_license`); every request is checked once for its',
    `answer first. Capacity: autocannon closed loop, ${CAPACITY_CONNECTIONS} connections, after a warm-up; the figure is requests /`,
    `seconds. Then autocannon paces ${Math.round(LOAD_FRACTION * 100)}% of that rate (\`overallRate\`, ${PACED_CONNECTIONS}`,
    'connections, latency corrected for coordinated omission) for five back-to-back one-minute segments, each with its own p50/p99.',
    'Errors are non-2xx answers, socket errors and timeouts, all segments together; the goal is none. RSS of the workerd process and',
    'of the origin process (VmRSS in /proc/<pid>/status) is sampled every 10 s. Flat memory: the mean RSS of the last minute is at',
    `most ${Math.round(FLAT_TOLERANCE * 100)}% above the mean of the second minute (the first minute is warm-up); the least-squares`,
    'slope after the first minute is given as well. `--quick`: the gate alone (no origin), 2 s warm-up, 4 s capacity, 2 × 10 s',
    'paced, RSS every 2 s, the windows scaled to fifths of the run. The machine is shared: capacity and latencies are absolute and',
    'move with its load.',
  ].join(' '),
  async run({ quick }) {
    const settings = quick ? QUICK : FULL;
    const internalSecret = randomBytes(32).toString('base64url');
    const signingKey = { ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid: 'bench-load' };
    const gate: ServedWorker = await serveWorker(join(repositoryRoot, 'wrangler.toml'), {
      INTERNAL_SECRET: internalSecret,
      AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(signingKey),
    });
    let origin: Origin | undefined;
    try {
      if (settings.withOrigin) origin = await startOrigin(gate.url, internalSecret);
      const { approved, blocked } = await seed(gate.url, internalSecret);
      await confirm(gate.url, approved[0]!, (body) => body.status === 'approved', 'approval');
      await confirm(gate.url, blocked[0]!, (body) => body.status === 'blocked' && body.reason === 'no_license', 'blocked');
      const mix = approved.flatMap((request, index) => [request, blocked[index]!]);

      await cannon(gate.url, mix, { connections: CAPACITY_CONNECTIONS, seconds: settings.warmupSeconds });
      const capacityRun = await cannon(gate.url, mix, { connections: CAPACITY_CONNECTIONS, seconds: settings.capacitySeconds });
      if (capacityRun.non2xx + capacityRun.errors + capacityRun.timeouts > 0) {
        throw new Error(`capacity run: ${capacityRun.non2xx} non-2xx, ${capacityRun.errors} errors, ${capacityRun.timeouts} timeouts`);
      }
      const capacity = capacityRun.requests.total / settings.capacitySeconds;
      const rate = Math.max(1, Math.round(capacity * LOAD_FRACTION));
      const chainBefore = origin ? ((await chainEntries(origin)) ?? 0) : 0;

      const samples: Sample[] = [];
      const started = performance.now();
      const sample = () =>
        samples.push({ atSeconds: (performance.now() - started) / 1000, workerd: rssMib(gate.pid), origin: rssMib(origin?.pid) });
      sample();
      const sampler = setInterval(sample, settings.sampleEverySeconds * 1000);
      const segments: Segment[] = [];
      try {
        for (let index = 0; index < settings.segments; index++) {
          const result = await cannon(gate.url, mix, { connections: PACED_CONNECTIONS, seconds: settings.segmentSeconds, rate });
          segments.push({
            requests: result.requests.total,
            requestsPerSecond: result.requests.total / settings.segmentSeconds,
            p50: result.latency.p50,
            p99: result.latency.p99,
            non2xx: result.non2xx,
            errors: result.errors,
            timeouts: result.timeouts,
          });
          console.log(
            `  segment ${index + 1}/${settings.segments}: ${Math.round(result.requests.total / settings.segmentSeconds)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, ${result.non2xx + result.errors + result.timeouts} errors, workerd ${round(rssMib(gate.pid) ?? Number.NaN, 1)} MiB${origin ? `, origin ${round(rssMib(origin.pid) ?? Number.NaN, 1)} MiB` : ''}`,
          );
        }
      } finally {
        clearInterval(sampler);
      }
      sample();
      const runSeconds = (performance.now() - started) / 1000;

      // The origin's chain after the load: how far the audit hand-off kept up (then drained).
      const decisions = segments.reduce((sum, segment) => sum + segment.requests, 0);
      const chainAtEnd = origin ? await chainEntries(origin) : undefined;
      const errorCount = segments.reduce((sum, segment) => sum + segment.non2xx + segment.errors + segment.timeouts, 0);
      const achieved = decisions / (settings.segments * settings.segmentSeconds);
      const figures: Figure[] = [
        { key: 'load.capacity', label: 'capacity: approved + blocked mix, closed loop', value: round(capacity, 0), unit: 'req/s' },
        { key: 'load.target_rate', label: `paced rate (${Math.round(LOAD_FRACTION * 100)}% of capacity)`, value: rate, unit: 'req/s' },
        {
          key: 'load.achieved_over_target',
          label: 'achieved rate / paced rate',
          value: round(achieved / rate, 3),
          unit: 'ratio',
          goal: { atLeast: 0.95 },
        },
        { key: 'load.duration', label: 'paced run', value: round(runSeconds, 0), unit: 's' },
        { key: 'load.requests', label: 'requests in the paced run', value: decisions, unit: 'requests' },
        {
          key: 'load.errors',
          label: 'errors (non-2xx, socket errors, timeouts)',
          value: errorCount,
          unit: 'requests',
          goal: { atMost: 0 },
        },
        { key: 'load.latency_p50', label: 'latency p50, median over segments', value: median(segments.map((s) => s.p50)), unit: 'ms' },
        { key: 'load.latency_p99_worst', label: 'latency p99, worst segment', value: Math.max(...segments.map((s) => s.p99)), unit: 'ms' },
        ...memoryFigures('workerd', 'gate workerd process', samples, runSeconds),
        ...memoryFigures('origin', 'origin process', samples, runSeconds),
      ];
      if (chainAtEnd !== undefined && Number.isFinite(chainAtEnd)) {
        figures.push({
          key: 'load.audit_chained_at_end',
          label: 'decisions of the paced run in the origin’s audit chain when it ended',
          value: round(Math.min(1, (chainAtEnd - chainBefore) / decisions), 3),
          unit: 'ratio',
        });
      }
      const perSegment = segments
        .map(
          (s, index) =>
            `${index + 1}: ${round(s.requestsPerSecond, 0)} req/s, p50 ${s.p50} ms, p99 ${s.p99} ms, ${s.non2xx + s.errors + s.timeouts} errors`,
        )
        .join('; ');
      const rssSeries = (name: 'workerd' | 'origin') =>
        samples.map((s) => (s[name] === undefined ? '?' : String(round(s[name]!, 0)))).join(' ');
      return {
        figures,
        notes: [
          `Segments of ${settings.segmentSeconds} s (${perSegment}).`,
          `RSS every ${settings.sampleEverySeconds} s, MiB: workerd ${rssSeries('workerd')}; origin ${rssSeries('origin')}.`,
          'The rate and latencies are absolute and move with the load of the shared machine; none is compared by --quick.',
        ],
      };
    } finally {
      await origin?.stop();
      await gate.dispose();
    }
  },
};

export default bench;
