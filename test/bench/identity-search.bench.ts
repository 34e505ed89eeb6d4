import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { limits, ProblemError } from '@vip/shared-schema';
import { type SQL, sql } from 'drizzle-orm';
import type { DatabaseHandle } from '../../origin/src/db/client.js';
import { INDEXED_EMBEDDING_MODELS } from '../../origin/src/db/schema.js';
import { openScratchServerDatabase } from '../../origin/src/testing/database.js';
import { mulberry32 } from '../../origin/src/testing/random.js';
import { nearestVoice } from '../../origin/src/voice-records/store.js';
import { createVoiceprintEngine, type VoiceprintEngine } from '../../origin/src/voiceprint/index.js';
import { repositoryRoot } from '../support/repository.js';
import type { Bench, Figure } from './bench.js';
import { fileNamedIn, type Recording, readSpeakers, shuffled } from './sequential-enrollment.js';
import { median, percentile, round } from './support/stats.js';

/*
 * 1:N identity search at registry scale (issue 12, item 6): the enrollment conflict search
 * (`nearestVoice`, origin/src/voice-records/store.ts) over a pgvector HNSW index holding up to a million
 * voiceprints, on the Postgres server. Real enrollments of dev speakers are planted among synthetic
 * voiceprints drawn to look like real impostors to each other; the other half of each planted
 * speaker's recordings is then searched for, as a second owner's enrollment would be.
 */

const DEV = join(repositoryRoot, '..', 'shared', 'speech', 'dev');
/** The index the migration builds: pgvector's defaults (docs/DECISIONS.md, "1:N search at scale"). */
const HNSW = { m: 16, efConstruction: 64 };
/** The production search reads pgvector's default ef_search (40); a wider one is measured beside it. */
const EF_SEARCH = [40, 100];
/** Speakers planted (each enrolled once and searched for once). */
const PLANTED = { quick: 6, full: 40 };
/** Searches of a new, unrelated voiceprint (an impostor enrollment): most of the latency sample. */
const IMPOSTOR_SEARCHES = { quick: 20, full: 200 };
/** Of those, how many are also answered by an exact scan (a scan of a million rows takes seconds). */
const EXACT_IMPOSTOR_SEARCHES = { quick: 20, full: 40 };

/** A deterministic normal sample (Box–Muller), so a run can be repeated. */
function normalSource(seed: number): () => number {
  const uniform = mulberry32(seed);
  // 1 − u lies in (0, 1], where the logarithm is finite.
  return () => Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform());
}

const normalized = (vector: Float32Array): Float32Array => {
  const norm = Math.hypot(...vector);
  return vector.map((x) => x / norm);
};
const dot = (a: Float32Array, b: Float32Array) => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

function meanAndStd(values: number[]) {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  return { mean, std: Math.sqrt(values.reduce((a, b) => a + (b - mean) ** 2, 0) / values.length) };
}

/** Share of the synthetic spread drawn as full-dimensional noise, so that no direction is empty. */
const ISOTROPIC_SHARE = 0.3;

/**
 * Synthetic voiceprints spread like the real enrollments: their mean direction plus a Gaussian mix
 * of their deviations from their mean (so the same dominant directions), plus isotropic noise
 * (ISOTROPIC_SHARE of the variance). Two lengths are fitted so that the cosine between two drawn
 * voiceprints has the mean and the spread measured between real ones: the noise scale (for the
 * spread) and the length of the shared direction (for the mean), by alternating bisections. Only
 * their ratio survives the normalisation, so the fit approaches both targets without always
 * meeting them (with 40 speakers: mean 0.105 for 0.091, spread 0.183 for 0.202); the notes print
 * what was reached.
 */
function syntheticVoiceprints(real: Float32Array[], target: { mean: number; std: number }, seed: number) {
  const dim = real[0]!.length;
  const normal = normalSource(seed);
  const centre = real.reduce((sum, vector) => sum.map((x, i) => x + vector[i]! / real.length), new Float32Array(dim));
  const deviations = real.map((vector) => vector.map((x, i) => x - centre[i]!));
  const rmsDeviation = Math.sqrt(deviations.reduce((sum, deviation) => sum + dot(deviation, deviation), 0) / deviations.length);
  const mixed = Math.sqrt((1 - ISOTROPIC_SHARE) / Math.max(1, real.length - 1));
  const isotropic = (Math.sqrt(ISOTROPIC_SHARE) * rmsDeviation) / Math.sqrt(dim);
  const draw = (scale: number, centreLength: number): Float32Array => {
    const vector = centre.map((x) => x * centreLength);
    for (const deviation of deviations) {
      const weight = scale * mixed * normal();
      for (let i = 0; i < dim; i++) vector[i]! += weight * deviation[i]!;
    }
    for (let i = 0; i < dim; i++) vector[i]! += scale * isotropic * normal();
    return normalized(vector);
  };
  const cosines = (scale: number, centreLength: number) => {
    const sample = Array.from({ length: 600 }, () => draw(scale, centreLength));
    return meanAndStd(sample.flatMap((a, i) => (i % 2 === 0 ? [dot(a, sample[i + 1]!)] : [])));
  };
  /** Geometric bisection of `x` in [low, high] for a measure that grows with x. */
  const solve = (measure: (x: number) => number, goal: number, low: number, high: number) => {
    for (let step = 0; step < 16; step++) {
      const middle = Math.sqrt(low * high);
      if (measure(middle) < goal) low = middle;
      else high = middle;
    }
    return Math.sqrt(low * high);
  };
  let [scale, centreLength] = [1, 1];
  for (let round = 0; round < 3; round++) {
    scale = solve((x) => cosines(x, centreLength).std, target.std, 0.02, 50);
    centreLength = solve((x) => cosines(scale, x).mean, target.mean, 0.02, 50);
  }
  return { scale, centreLength, spread: cosines(scale, centreLength), next: () => draw(scale, centreLength) };
}

/**
 * Enrollments of dev speakers whose two halves each make one: [the planted half, the searched half].
 * A speaker with a half of too little speech is passed over.
 */
async function realEnrollments(engine: VoiceprintEngine, count: number): Promise<[Float32Array, Float32Array][]> {
  const pairs: [Float32Array, Float32Array][] = [];
  // The same seeded order as the sequential-enrollment evaluation, so every set is represented.
  for (const speaker of shuffled(readSpeakers(DEV), 1)) {
    if (pairs.length === count) break;
    const first = await embedHalf(engine, speaker.halves[0]);
    const second = first && (await embedHalf(engine, speaker.halves[1]));
    if (first && second) pairs.push([first, second]);
  }
  if (pairs.length < count) throw new Error(`only ${pairs.length} dev speakers have two halves with enough speech`);
  return pairs;
}

/**
 * The enrollment embedding of up to ten recordings, leaving out any the engine names as unusable;
 * null when together they hold too little speech.
 */
async function embedHalf(engine: VoiceprintEngine, half: Recording[]): Promise<Float32Array | null> {
  let files = half.slice(0, limits.enrollMaxFiles).map((recording) => new Uint8Array(readFileSync(join(DEV, recording.path))));
  while (files.length > 0) {
    try {
      return normalized((await engine.embedMany(files)).embedding);
    } catch (error) {
      if (!(error instanceof ProblemError && (error.code === 'too_short' || error.code === 'no_speech'))) throw error;
      const unusable = fileNamedIn(error.message);
      if (unusable === null) return null;
      files = files.filter((_, index) => index !== unusable);
    }
  }
  return null;
}

/** Streams rows into a staging table through psql's COPY (the bulk path an operator would use too). */
async function copyRows(url: string, table: string, rows: Iterable<string>): Promise<void> {
  const psql = spawn('psql', [url, '-v', 'ON_ERROR_STOP=1', '-qc', `\\copy ${table} from stdin`], { stdio: ['pipe', 'ignore', 'pipe'] });
  let stderr = '';
  psql.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => psql.once('exit', resolve));
  let batch = '';
  for (const row of rows) {
    batch += `${row}\n`;
    if (batch.length > 1 << 20) {
      if (!psql.stdin.write(batch)) await new Promise((resolve) => psql.stdin.once('drain', resolve));
      batch = '';
    }
  }
  psql.stdin.end(batch);
  const code = await exited;
  if (code !== 0) throw new Error(`psql \\copy into ${table} failed: ${stderr}`);
}

const vectorText = (vector: Float32Array) => `[${Array.from(vector, (x) => x.toPrecision(6)).join(',')}]`;

async function scalar(handle: DatabaseHandle, query: SQL): Promise<unknown> {
  const { rows } = (await handle.db.execute(query)) as unknown as { rows: { value: unknown }[] };
  return rows[0]?.value;
}

interface SizeResult {
  size: number;
  loadSeconds: number;
  buildSeconds: number;
  indexMegabytes: number;
  byEfSearch: {
    efSearch: number;
    p50Ms: number;
    p99Ms: number;
    /** Planted speakers whose own enrollment the index search returned first. */
    trueVoicePct: number;
    /** Searches whose first answer is the exact scan's first answer. */
    agreesWithExactPct: number;
  }[];
  exactTrueVoicePct: number;
  exactP50Ms: number;
}

async function measureSize(
  serverUrl: string,
  size: number,
  model: { name: string; dim: number },
  planted: [Float32Array, Float32Array][],
  synthetic: ReturnType<typeof syntheticVoiceprints>,
  quick: boolean,
): Promise<SizeResult> {
  const handle: DatabaseHandle = await openScratchServerDatabase(serverUrl, 'vip_bench_search');
  try {
    const db = handle.db;
    const url = new URL(serverUrl);
    url.pathname = `/${await scalar(handle, sql`select current_database() as value`)}`;
    const population = randomUUID();
    const plantedOwners = planted.map(() => randomUUID());
    const users = [population, ...plantedOwners];
    await db.execute(
      sql.raw(
        `insert into users (id, email, password_hash, role, created_at) select id::uuid, id || '@bench.example', 'x', 'owner', now() from unnest(array['${users.join("','")}']) as id`,
      ),
    );
    // The migration's index for this model (if any) is dropped: bulk loading into a built graph is
    // far slower than building once, and the build is what is timed.
    const migrated = INDEXED_EMBEDDING_MODELS.find((entry) => entry.name === model.name);
    if (migrated) await db.execute(sql.raw(`drop index ${migrated.index}`));
    await db.execute(sql.raw('create unlogged table bench_rows (voice_id uuid, owner_id uuid, embedding vector)'));

    const loadStarted = performance.now();
    const plantedIds = planted.map(() => randomUUID());
    await copyRows(url.toString(), 'bench_rows', [
      ...planted.map(([enrolled], i) => `${plantedIds[i]}\t${plantedOwners[i]}\t${vectorText(enrolled)}`),
      ...(function* () {
        for (let i = 0; i < size - planted.length; i++) yield `${randomUUID()}\t${population}\t${vectorText(synthetic.next())}`;
      })(),
    ]);
    await db.execute(
      sql.raw(
        `insert into voices (id, owner_id, name, status, model, speech_seconds, quality) select voice_id, owner_id, 'bench', 'ready', '${model.name}', 30, '{}' from bench_rows`,
      ),
    );
    await db.execute(
      sql.raw(
        `insert into voice_embeddings (voice_id, owner_id, model, embedding) select voice_id, owner_id, '${model.name}', embedding from bench_rows`,
      ),
    );
    await db.execute(sql.raw('drop table bench_rows'));
    await db.execute(sql.raw('vacuum analyze voice_embeddings'));
    const loadSeconds = (performance.now() - loadStarted) / 1000;

    const buildStarted = performance.now();
    await db.execute(sql.raw("set maintenance_work_mem = '2GB'"));
    await db.execute(
      sql.raw(
        `create index bench_hnsw on voice_embeddings using hnsw ((embedding::vector(${model.dim})) vector_cosine_ops) with (m = ${HNSW.m}, ef_construction = ${HNSW.efConstruction}) where model = '${model.name}'`,
      ),
    );
    const buildSeconds = (performance.now() - buildStarted) / 1000;
    const indexBytes = Number(await scalar(handle, sql`select pg_relation_size('bench_hnsw') as value`));

    // Each search as a second owner's enrollment would run it: in a transaction, excluding the searcher's voices.
    const search = async (probe: Float32Array, settings: string[]) =>
      db.transaction(async (tx) => {
        for (const setting of settings) await tx.execute(sql.raw(`set local ${setting}`));
        const started = performance.now();
        const nearest = await nearestVoice(tx, { embedding: probe, model: model.name }, randomUUID());
        return { voiceId: nearest?.voiceId ?? null, ms: performance.now() - started };
      });
    const impostors = Array.from({ length: quick ? IMPOSTOR_SEARCHES.quick : IMPOSTOR_SEARCHES.full }, () => synthetic.next());
    const exactImpostors = impostors.slice(0, quick ? EXACT_IMPOSTOR_SEARCHES.quick : EXACT_IMPOSTOR_SEARCHES.full);
    const probes = planted.map(([, searched]) => searched);

    const exactSettings = ['enable_indexscan = off', 'enable_bitmapscan = off'];
    const exact: { voiceId: string | null; ms: number }[] = [];
    for (const probe of [...probes, ...exactImpostors]) exact.push(await search(probe, exactSettings));
    const byEfSearch: SizeResult['byEfSearch'] = [];
    for (const efSearch of EF_SEARCH) {
      const settings = [`hnsw.ef_search = ${efSearch}`];
      const answers: { voiceId: string | null; ms: number }[] = [];
      for (const probe of [...probes, ...impostors]) answers.push(await search(probe, settings));
      const compared = probes.length + exactImpostors.length;
      const agreeing = answers.slice(0, compared).filter((answer, i) => answer.voiceId === exact[i]!.voiceId).length;
      byEfSearch.push({
        efSearch,
        p50Ms: round(median(answers.map((answer) => answer.ms)), 2),
        p99Ms: round(
          percentile(
            answers.map((answer) => answer.ms),
            0.99,
          ),
          2,
        ),
        trueVoicePct: round(
          (100 * answers.slice(0, probes.length).filter((answer, i) => answer.voiceId === plantedIds[i]).length) / probes.length,
          1,
        ),
        agreesWithExactPct: round((100 * agreeing) / compared, 1),
      });
    }
    return {
      size,
      loadSeconds: round(loadSeconds, 1),
      buildSeconds: round(buildSeconds, 1),
      indexMegabytes: round(indexBytes / 2 ** 20, 1),
      byEfSearch,
      exactTrueVoicePct: round(
        (100 * exact.slice(0, probes.length).filter((answer, i) => answer.voiceId === plantedIds[i]).length) / probes.length,
        1,
      ),
      exactP50Ms: round(median(exact.map((answer) => answer.ms)), 1),
    };
  } finally {
    await handle.close();
  }
}

/** Registry sizes: `IDENTITY_SEARCH_SIZES=100000,1000000` overrides (the full run's sizes take most of an hour on two cores). */
function sizes(quick: boolean): number[] {
  const override = process.env.IDENTITY_SEARCH_SIZES;
  if (override) return override.split(',').map(Number);
  return quick ? [10_000] : [100_000, 1_000_000];
}

const bench: Bench = {
  title: '1:N identity search at registry scale (Postgres, pgvector HNSW): recall against an exact scan, latency, build',
  method: [
    'On the Postgres server named by TEST_DATABASE_URL (a fresh migrated database per size): real enrollments of dev speakers',
    `(bundled model, ${PLANTED.full} speakers; ${PLANTED.quick} with --quick) are planted among synthetic voiceprints whose pairwise`,
    'cosines have the mean and spread measured between those real enrollments (their mean direction plus a Gaussian mix of their',
    `deviations and ${ISOTROPIC_SHARE * 100} % isotropic noise, two lengths fitted to the measured cosine mean and spread).`,
    'Rows are bulk-loaded (psql COPY), then the partial expression HNSW index the',
    `migration defines is built (m ${HNSW.m}, ef_construction ${HNSW.efConstruction}, maintenance_work_mem 2 GB) and timed. Each`,
    "planted speaker's other half, and new synthetic voiceprints (impostors), are searched with the enrollment conflict search",
    '(`nearestVoice`: iterative scan strict_order, another owner) at ef_search 40 (production) and 100. Recall: the planted',
    'voice returned first, and agreement of the first answer with an exact scan of the same query (index scans off). Sizes',
    '100,000 and 1,000,000; --quick 10,000. Skipped without TEST_DATABASE_URL or the speech corpus.',
  ].join(' '),
  async run({ quick }) {
    const serverUrl = process.env.TEST_DATABASE_URL;
    if (!serverUrl)
      return { skipped: 'TEST_DATABASE_URL is not set (a Postgres server with pgvector; .ci/provision-postgres.sh makes one)' };
    if (!existsSync(join(DEV, 'manifest.tsv'))) return { skipped: `no speech corpus at ${DEV}` };
    const engine = await createVoiceprintEngine({ threads: 2 });
    let planted: [Float32Array, Float32Array][];
    try {
      planted = await realEnrollments(engine, quick ? PLANTED.quick : PLANTED.full);
    } finally {
      await engine.close();
    }
    const model = { name: engine.model.name, dim: engine.model.dim };
    const enrolled = planted.map(([first]) => first);
    const impostorCosines = enrolled.flatMap((a, i) => enrolled.slice(i + 1).map((b) => dot(a, b)));
    const real = meanAndStd(impostorCosines);
    const synthetic = syntheticVoiceprints(enrolled, real, 12);
    const drawn = synthetic.spread;
    const sameSpeaker = meanAndStd(planted.map(([a, b]) => dot(a, b)));

    const figures: Figure[] = [];
    const notes = [
      `model ${model.name} (${model.dim} dimensions); ${planted.length} planted speakers`,
      `impostor cosine between real enrollments: mean ${round(real.mean, 3)}, std ${round(real.std, 3)} (${impostorCosines.length} pairs); ` +
        `synthetic: mean ${round(drawn.mean, 3)}, std ${round(drawn.std, 3)} (noise scale ${round(synthetic.scale, 2)}, centre length ${round(synthetic.centreLength, 2)}); same speaker, two halves: mean ${round(sameSpeaker.mean, 3)}`,
    ];
    for (const size of sizes(quick)) {
      const result = await measureSize(serverUrl, size, model, planted, synthetic, quick);
      // Printed as soon as it is known: the largest size takes most of an hour on two cores.
      console.log(`  ${size}: ${JSON.stringify(result)}`);
      const key = `identity_search.${size}`;
      const label = size.toLocaleString('en');
      figures.push(
        { key: `${key}.build_s`, label: `${label} voiceprints: HNSW build`, value: result.buildSeconds, unit: 's' },
        { key: `${key}.index_mb`, label: `${label} voiceprints: index size`, value: result.indexMegabytes, unit: 'MB' },
      );
      for (const run of result.byEfSearch) {
        const at = `${key}.ef${run.efSearch}`;
        figures.push(
          { key: `${at}.p50_ms`, label: `${label}, ef_search ${run.efSearch}: search p50`, value: run.p50Ms, unit: 'ms' },
          { key: `${at}.p99_ms`, label: `${label}, ef_search ${run.efSearch}: search p99`, value: run.p99Ms, unit: 'ms' },
          {
            key: `${at}.agrees_with_exact_pct`,
            label: `${label}, ef_search ${run.efSearch}: first answer = exact scan's`,
            value: run.agreesWithExactPct,
            unit: '%',
          },
          {
            key: `${at}.true_voice_pct`,
            label: `${label}, ef_search ${run.efSearch}: planted voice found first`,
            value: run.trueVoicePct,
            unit: '%',
          },
        );
      }
      figures.push({
        key: `${key}.exact_true_voice_pct`,
        label: `${label}: planted voice first by exact scan`,
        value: result.exactTrueVoicePct,
        unit: '%',
      });
      notes.push(`${label}: bulk load ${result.loadSeconds} s; exact scan p50 ${result.exactP50Ms} ms`);
    }
    return { figures, notes };
  },
};

export default bench;
