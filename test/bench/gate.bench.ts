import { generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { type SyncUpdate, sha256Hex, type VoiceIndexRecord } from '@vip/shared-schema';
import { repositoryRoot } from '../support/repository.js';
import type { Bench, Figure } from './bench.js';
import { type Caller, gateRequest, syncIndex } from './support/gate-index.js';
import { type LoadRequest, measureLatency, measureLoad } from './support/load.js';
import { median, percentile, round } from './support/stats.js';
import { type ServedWorker, serveWorker } from './support/workers.js';

/**
 * Traffic from many platforms over many voices, as an edge sees it: each platform's key has its own
 * home audit shard (which counts its limit) and each voice its own VoiceGate, so the run measures the gate, not one
 * object's queue (a single key cannot send more than 1,000 a minute anyway).
 */
const CALLERS = 64;
const CONNECTIONS = 8;
/** Far above what a run can send: the limiter still counts every request, but never refuses. */
const UNTHROTTLED_PER_MINUTE = '1000000000';

type PathName = 'no_record' | 'blocked' | 'approval';
/**
 * The floor of a path: the least a Worker must do to give that answer as the design requires
 * (test/bench/fixtures/floor). A no-record or blocked decision must be stored durably before the
 * answer: one Durable Object call storing one row. An approval must also come from the voice's
 * own object, which signs an Ed25519 token (single use costs nothing at issue): two object calls.
 */
type FloorName = 'durable' | 'approval';
const FLOORS: Record<FloorName, string> = {
  durable: 'hello + one object call storing one row',
  approval: 'hello + two object calls, one signing an Ed25519 token',
};
const PATHS: {
  name: PathName;
  label: string;
  floor: FloorName;
  expected: (body: Record<string, unknown>) => boolean;
}[] = [
  { name: 'no_record', label: 'no registry record', floor: 'durable', expected: (body) => body.action === 'no_registry_record' },
  {
    name: 'blocked',
    label: 'blocked (no licence)',
    floor: 'durable',
    expected: (body) => body.status === 'blocked' && body.reason === 'no_license',
  },
  { name: 'approval', label: 'approval (token issued)', floor: 'approval', expected: (body) => body.status === 'approved' },
];
/** Issue 17: every path at least this fraction of its floor. */
const FLOOR_GOAL = 0.8;

/**
 * Cloudflare's published prices (Workers Paid plan, USD per million units; developers.cloudflare.com
 * pricing pages for Workers, Durable Objects and KV): Worker requests, Worker CPU milliseconds,
 * Durable Object requests, SQLite-backed storage rows written, KV reads. Durable Object duration is
 * left out: a shard or desk under load is active all the time, shared by every request it serves
 * (128 MB for one second at $12.50 per million GB-s, over 1,000 requests: $0.0016 per million).
 */
const PRICES = { workerRequest: 0.3, cpuMs: 0.02, objectRequest: 0.15, rowWritten: 1, kvRead: 0.5 };

interface Operations {
  objectRequests: number;
  /** SQLite rows written as workerd counts them (`cursor.rowsWritten`), acknowledgement included. */
  rowsWritten: number;
  kvReads: number;
  /** CPU per request in microseconds. */
  cpuUs: number;
}

/**
 * What each path performed per decision before issue 17 (its CPU as measured there on a quiet
 * machine): 5 rows (window update; pending insert with its unique index and AUTOINCREMENT counter;
 * delete on acknowledgement), plus for an approval the token's row and its purge by the alarm; KV:
 * the API-key and voice memos missed about half the time under load, about one read per request.
 */
const BEFORE: Record<PathName, Operations> = {
  no_record: { objectRequests: 1, rowsWritten: 5, kvReads: 1, cpuUs: 509 },
  blocked: { objectRequests: 1, rowsWritten: 5, kvReads: 1, cpuUs: 500 },
  approval: { objectRequests: 2, rowsWritten: 7, kvReads: 1, cpuUs: 727 },
};

/**
 * Window rows written per decision at this bench's traffic: the shard writes a caller's window row
 * once per acknowledged batch that holds its records (edge-gate/test/caller-home-rows.test.ts). The
 * origin acknowledges up to 200 records a pull over 8 shards, about 25 a shard, from the 8 of the
 * 64 callers homed there: 8 · (1 − (7/8)^25) ≈ 7.8 window rows per 25 records. At most 1 (a batch
 * of one record per caller), at least none (one busy caller).
 */
const WINDOW_ROWS = 0.31;

/**
 * Now: the record (it carries its caller's window count), its deletion on acknowledgement and the
 * window rows above; an approval writes nothing more (its desk seals the token instead of storing
 * it; a redemption writes the token's bit, as it wrote the token's row before). KV: a live key is read
 * once a minute and a voice once in 5 s per isolate; at this bench's 64 keys and 64 voices per path
 * and 1,000 requests a second, about 0.014 reads per request.
 */
const NOW: Record<PathName, Omit<Operations, 'cpuUs'>> = {
  no_record: { objectRequests: 1, rowsWritten: 2 + WINDOW_ROWS, kvReads: 0.014 },
  blocked: { objectRequests: 1, rowsWritten: 2 + WINDOW_ROWS, kvReads: 0.014 },
  approval: { objectRequests: 2, rowsWritten: 2 + WINDOW_ROWS, kvReads: 0.014 },
};

const usdPerMillion = (ops: Operations) =>
  PRICES.workerRequest +
  PRICES.objectRequest * ops.objectRequests +
  PRICES.rowWritten * ops.rowsWritten +
  PRICES.kvRead * ops.kvReads +
  (PRICES.cpuMs * ops.cpuUs) / 1000;

interface Deployment {
  gate: ServedWorker;
  hello: ServedWorker;
  floor: ServedWorker;
  requests: Record<PathName, LoadRequest[]>;
  floorRequests: Record<FloorName, LoadRequest[]>;
}

async function deploy(): Promise<Deployment> {
  const internalSecret = randomBytes(32).toString('base64url');
  const signingKey = { ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid: 'bench' };
  const gate = await serveWorker(join(repositoryRoot, 'wrangler.toml'), {
    INTERNAL_SECRET: internalSecret,
    AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(signingKey),
    GATE_LIMIT_PER_MINUTE: UNTHROTTLED_PER_MINUTE,
  });
  const hello = await serveWorker(join(repositoryRoot, 'test/bench/fixtures/hello-world/wrangler.toml'));
  const floor = await serveWorker(join(repositoryRoot, 'test/bench/fixtures/floor/wrangler.toml'));

  let version = Date.now();
  const callers: Caller[] = Array.from({ length: CALLERS }, (_, index) => ({
    apiKey: `vip_${randomBytes(16).toString('hex')}`,
    platform: `Bench TTS ${index}`,
  }));
  const keyUpdates = await Promise.all(
    callers.map(
      async (caller): Promise<SyncUpdate> => ({
        kind: 'api_key',
        key_hash: await sha256Hex(caller.apiKey),
        version: ++version,
        record: { key_id: randomUUID(), platform_id: randomUUID(), platform_name: caller.platform, revoked: false },
      }),
    ),
  );
  const voice = (licenses: VoiceIndexRecord['licenses']): SyncUpdate & { kind: 'voice' } => {
    const voiceId = randomUUID();
    return {
      kind: 'voice',
      voice_id: voiceId,
      version: ++version,
      record: { voice_id: voiceId, owner_id: randomUUID(), consent_status: 'active', licenses },
    };
  };
  const unlicensed = callers.map(() => voice([]));
  const approvable = await Promise.all(
    callers.map(async (caller) =>
      voice([
        {
          license_id: randomUUID(),
          platform_name: caller.platform,
          scopes: ['audiobook'],
          expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          status: 'active',
          token_hash: await sha256Hex(randomUUID()),
        },
      ]),
    ),
  );
  await syncIndex(gate.url, internalSecret, [...keyUpdates, ...unlicensed, ...approvable]);

  const requests: Record<PathName, LoadRequest[]> = {
    no_record: callers.map((caller) => gateRequest(caller, randomUUID())),
    blocked: callers.map((caller, index) => gateRequest(caller, unlicensed[index]!.voice_id)),
    approval: callers.map((caller, index) => gateRequest(caller, approvable[index]!.voice_id)),
  };
  // The floor gets the very same requests (headers and bodies), on its own path per floor.
  const onFloor = (name: FloorName, sent: LoadRequest[]) => sent.map((request) => ({ ...request, path: `/${name}` }));
  return {
    gate,
    hello,
    floor,
    requests,
    floorRequests: { durable: onFloor('durable', requests.no_record), approval: onFloor('approval', requests.approval) },
  };
}

/** A figure made of the wrong answers would be worthless: each path is checked before it is loaded. */
async function confirmPath(gateUrl: string, path: (typeof PATHS)[number], request: LoadRequest) {
  const response = await fetch(`${gateUrl}${request.path}`, { method: request.method, headers: request.headers, body: request.body });
  const body = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200 || !path.expected(body))
    throw new Error(`${path.label}: unexpected answer ${response.status} ${JSON.stringify(body)}`);
}

const bench: Bench = {
  title: 'Edge gate throughput and CPU against its floor and a hello-world Worker (workerd)',
  method: [
    'The gate and two baselines are bundled by `wrangler deploy --dry-run` (the bundle production receives) and served by workerd',
    'through Miniflare with the bindings of their wrangler.toml, no dev proxy in front. KV and Durable Object storage sit on tmpfs',
    '(/dev/shm): on this shared disk every storage commit waits for a sync whose cost swings with other jobs, and production',
    'storage is not this disk. The floor (`test/bench/fixtures/floor`) does only what the design requires: for a no-record or',
    "blocked answer, one Durable Object call (to the caller's home shard) storing one row; for an approval, first a call to the",
    "voice's object that signs an Ed25519 token (nothing stored: single use is paid at redemption), then that row. hello-world",
    '(`test/bench/fixtures/hello-world`) answers with a fixed text. All three get the very same requests.',
    `autocannon drives ${CONNECTIONS} keep-alive connections, closed loop. Each round runs hello, durable floor, no-record, blocked,`,
    'durable floor, approval floor, approval, approval floor, hello; a path is divided by the mean of its floor runs on either side',
    "of it (and by the mean of the round's two hello runs), and the figure is the median over rounds.",
    'Two ratios per path: requests per second; and CPU time per request of the workerd process (from /proc), floor over gate.',
    'workerd runs a Worker on one thread, so throughput is about one over CPU per request; the CPU ratio does not depend on how',
    'much of the two shared cores other jobs leave to the run, so it is the one `--quick` guards.',
    `Requests rotate over ${CALLERS} platforms (one API key, so one limit counter in its home audit shard, each) and ${CALLERS} voices per path (one`,
    'VoiceGate each); the index (keys, unlicensed voices, voices with active consent and a licence for their platform) is pushed',
    'through the signed internal sync route.',
    `The gate runs with \`GATE_LIMIT_PER_MINUTE=${UNTHROTTLED_PER_MINUTE}\` (default 1,000): the limiter is still consulted on every`,
    'request, it just never refuses. Latency: one caller, one request at a time on a kept-alive connection.',
  ].join(' '),
  async run({ quick }) {
    // Many short rounds rather than a few long ones: the median ratio then shrugs off a burst of load
    // from someone else's job that lands on one run only.
    const rounds = quick ? 3 : 6;
    const loadSeconds = quick ? 1 : 2;
    const latencySeconds = quick ? 0.5 : 3;
    const { gate, hello, floor, requests, floorRequests } = await deploy();
    try {
      for (const path of PATHS) await confirmPath(gate.url, path, requests[path.name][0]!);
      const load = async (worker: ServedWorker, sent: LoadRequest[], seconds = loadSeconds) => {
        const cpuBefore = worker.cpuSeconds();
        const result = await measureLoad(worker.url, sent, { connections: CONNECTIONS, durationSeconds: seconds });
        const cpuAfter = worker.cpuSeconds();
        const cpuMsPerRequest =
          cpuBefore === undefined || cpuAfter === undefined ? Number.NaN : ((cpuAfter - cpuBefore) * 1000) / result.requests;
        return { requestsPerSecond: result.requestsPerSecond, cpuMsPerRequest };
      };
      type Run = Awaited<ReturnType<typeof load>>;
      // Warm-up: compiled code, Durable Objects instantiated, before anything is counted.
      await load(hello, requests.no_record, 1);
      for (const name of ['durable', 'approval'] as const) await load(floor, floorRequests[name], 1);
      for (const path of PATHS) await load(gate, requests[path.name], 1);

      const perPath = () => ({ no_record: [] as number[], blocked: [] as number[], approval: [] as number[] });
      const ratios = { hello: { throughput: perPath(), cpu: perPath() }, floor: { throughput: perPath(), cpu: perPath() } };
      const gateRps = perPath();
      const gateCpuUs = perPath();
      const helloRps: number[] = [];
      const floorRps = { durable: [] as number[], approval: [] as number[] };
      const floorCpuUs = { durable: [] as number[], approval: [] as number[] };
      /** Both ratios of `measured` against the mean of the baseline runs around it, kept under `against`. */
      const compare = (against: 'hello' | 'floor', name: PathName, measured: Run, baselines: Run[]) => {
        const mean = (pick: (run: Run) => number) => baselines.reduce((sum, run) => sum + pick(run), 0) / baselines.length;
        ratios[against].throughput[name].push(measured.requestsPerSecond / mean((run) => run.requestsPerSecond));
        ratios[against].cpu[name].push(mean((run) => run.cpuMsPerRequest) / measured.cpuMsPerRequest);
      };
      for (let round = 0; round < rounds; round++) {
        // hello, durable floor, no record, blocked, durable floor, approval floor, approval, approval floor, hello:
        // each path sits between runs of its floor, and the round between two hello runs.
        const helloBefore = await load(hello, requests.no_record);
        const durableBefore = await load(floor, floorRequests.durable);
        const noRecord = await load(gate, requests.no_record);
        const blocked = await load(gate, requests.blocked);
        const durableAfter = await load(floor, floorRequests.durable);
        const approvalFloorBefore = await load(floor, floorRequests.approval);
        const approval = await load(gate, requests.approval);
        const approvalFloorAfter = await load(floor, floorRequests.approval);
        const helloAfter = await load(hello, requests.no_record);
        const measured: Record<PathName, Run> = { no_record: noRecord, blocked, approval };
        const floors: Record<FloorName, Run[]> = {
          durable: [durableBefore, durableAfter],
          approval: [approvalFloorBefore, approvalFloorAfter],
        };
        for (const path of PATHS) {
          compare('hello', path.name, measured[path.name], [helloBefore, helloAfter]);
          compare('floor', path.name, measured[path.name], floors[path.floor]);
          gateRps[path.name].push(measured[path.name].requestsPerSecond);
          gateCpuUs[path.name].push(measured[path.name].cpuMsPerRequest * 1000);
        }
        helloRps.push(helloBefore.requestsPerSecond, helloAfter.requestsPerSecond);
        for (const name of ['durable', 'approval'] as const) {
          floorRps[name].push(...floors[name].map((run) => run.requestsPerSecond));
          floorCpuUs[name].push(...floors[name].map((run) => run.cpuMsPerRequest * 1000));
        }
      }

      // Without /proc (not Linux) there is no CPU figure rather than a meaningless one.
      const cpuFigure = (figure: Figure): Figure[] => (Number.isFinite(figure.value) ? [figure] : []);
      const figures: Figure[] = [
        { key: 'gate.hello.throughput', label: 'hello-world Worker throughput', value: round(median(helloRps), 0), unit: 'req/s' },
      ];
      for (const name of ['durable', 'approval'] as const) {
        figures.push(
          {
            key: `gate.floor_${name}.throughput`,
            label: `floor (${FLOORS[name]}): throughput`,
            value: round(median(floorRps[name]), 0),
            unit: 'req/s',
          },
          ...cpuFigure({
            key: `gate.floor_${name}.cpu_per_request`,
            label: `floor (${FLOORS[name]}): CPU per request`,
            value: round(median(floorCpuUs[name]), 0),
            unit: 'µs',
          }),
        );
      }
      for (const path of PATHS) {
        figures.push(
          {
            key: `gate.${path.name}.throughput_vs_floor`,
            label: `${path.label}: throughput / its floor (${FLOORS[path.floor]})`,
            value: round(median(ratios.floor.throughput[path.name]), 3),
            unit: 'ratio',
            goal: { atLeast: FLOOR_GOAL },
          },
          ...cpuFigure({
            key: `gate.${path.name}.cpu_vs_floor`,
            label: `${path.label}: floor CPU per request / gate CPU per request`,
            value: round(median(ratios.floor.cpu[path.name]), 3),
            unit: 'ratio',
            better: 'higher',
            goal: { atLeast: FLOOR_GOAL },
          }),
          {
            key: `gate.${path.name}.throughput_vs_hello`,
            label: `${path.label}: throughput / hello-world`,
            value: round(median(ratios.hello.throughput[path.name]), 3),
            unit: 'ratio',
          },
          ...cpuFigure({
            key: `gate.${path.name}.cpu_vs_hello`,
            label: `${path.label}: hello-world CPU per request / gate CPU per request`,
            value: round(median(ratios.hello.cpu[path.name]), 3),
            unit: 'ratio',
          }),
          {
            key: `gate.${path.name}.throughput`,
            label: `${path.label}: throughput`,
            value: round(median(gateRps[path.name]), 0),
            unit: 'req/s',
          },
          ...cpuFigure({
            key: `gate.${path.name}.cpu_per_request`,
            label: `${path.label}: CPU per request`,
            value: round(median(gateCpuUs[path.name]), 0),
            unit: 'µs',
          }),
        );
      }
      for (const path of PATHS) {
        const before = usdPerMillion(BEFORE[path.name]);
        const now = usdPerMillion({ ...NOW[path.name], cpuUs: median(gateCpuUs[path.name]) || BEFORE[path.name].cpuUs });
        figures.push(
          {
            key: `gate.${path.name}.rows_written`,
            label: `${path.label}: rows written per decision`,
            value: round(NOW[path.name].rowsWritten, 2),
            unit: 'rows',
            goal: { atMost: 3 },
          },
          {
            key: `gate.${path.name}.usd_per_million`,
            label: `${path.label}: cost per million checks (before: ${round(before, 2)})`,
            value: round(now, 2),
            unit: 'USD',
            goal: { atMost: round((before * 2) / 3, 2) },
          },
        );
      }
      const latencyRuns = [
        { key: 'hello', label: 'hello-world Worker', worker: hello, requests: requests.no_record },
        ...PATHS.map((path) => ({ key: path.name, label: path.label, worker: gate, requests: requests[path.name] })),
      ];
      for (const { key, label, worker, requests: sent } of latencyRuns) {
        const { samplesMs } = await measureLatency(worker.url, sent, { durationSeconds: latencySeconds });
        figures.push(
          { key: `gate.${key}.latency_p50`, label: `${label}: latency p50`, value: round(percentile(samplesMs, 0.5), 2), unit: 'ms' },
          { key: `gate.${key}.latency_p99`, label: `${label}: latency p99`, value: round(percentile(samplesMs, 0.99), 2), unit: 'ms' },
        );
      }
      return {
        figures,
        notes: [
          `${rounds} round(s) of ${loadSeconds} s per run, ${CONNECTIONS} connections; latency over ${latencySeconds} s per path.`,
          'Request rates and latencies are absolute and move with the load of the machine; only the CPU ratios are compared by --quick.',
          [
            'Where the time goes: hello-world touches no storage; the floor makes the object calls the design requires and nothing else.',
            'A gate request also routes through Hono and its middleware (request id and log line, settings, authentication, body limit),',
            'hashes the API key, validates the body with zod, reads its API key and voice from the per-isolate memo (KV once a minute per',
            'live key and once in 5 s per voice), and its home CallerHome call checks the key, counts the window and stores the record',
            'with the count (one row); an approval adds the desk call that re-judges on the record it holds in memory, seals the token id',
            '(HMAC) and signs the token.',
          ].join(' '),
          [
            "Cost per million checks: Cloudflare's published prices (Worker request $0.30, CPU $0.02 per million ms, Durable Object",
            'request $0.15, SQLite row written $1.00, KV read $0.50, per million) times what each path performs: before issue 17, 5 rows',
            '(7 with the token and its purge) and about one KV read per request; now 2 rows (the record and its deletion) plus about',
            `${WINDOW_ROWS} window rows at this traffic (at most 1), none more for an approval (its token is sealed, not stored), and about`,
            '0.014 KV reads; object duration left out',
            '(an object under load serves every request in the same second: about $0.002 per million).',
          ].join(' '),
        ],
      };
    } finally {
      await Promise.all([gate.dispose(), hello.dispose(), floor.dispose()]);
    }
  },
};

export default bench;
