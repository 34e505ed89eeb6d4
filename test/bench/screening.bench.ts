import { randomUUID } from 'node:crypto';
import { SCREENING_MAX_MATCHES } from '@vip/shared-schema';
import { voiceEmbeddings, voices } from '../../origin/src/db/schema.js';
import { loggedIn, startTestOrigin } from '../../origin/src/testing/origin.js';
import { platformKey } from '../../origin/src/testing/platforms.js';
import { audioForm, speakerRecordings, startTestEngine } from '../../origin/src/testing/voiceprint.js';
import { insertEnrolledVoice } from '../../origin/src/testing/voices.js';
import { nearestVoices } from '../../origin/src/voice-records/store.js';
import type { Bench, Figure } from './bench.js';
import { median, percentile, round } from './support/stats.js';
import { timedEngine } from './support/timed-engine.js';

const REGISTRY_SIZE = 10_000;
const QUICK_REGISTRY_SIZE = 2_000;
/** Real speakers whose embeddings seed the synthetic registry (so it has the geometry of real voiceprints). */
const SEED_SPEAKERS = [
  'so762:SPEAKER9601',
  'so762:SPEAKER9608',
  'so762:SPEAKER9622',
  'so762:SPEAKER9623',
  'so762:SPEAKER9633',
  'so762:SPEAKER9640',
];
const ENROLLED_SPEAKER = 'so762:SPEAKER9612';
const STRANGER = 'dsp20:16307130260';

/**
 * Unit vectors drawn from the spread of real voiceprints: per dimension, the mean and standard
 * deviation of the seed recordings' embeddings, with Gaussian draws. A registry of these has the
 * shape of real embeddings without piling thousands of near-duplicates onto a few speakers (which
 * no registry has, and which an HNSW graph handles worst).
 */
function voiceprintSampler(seeds: Float32Array[]): () => string {
  const dim = seeds[0]!.length;
  const mean = Array.from({ length: dim }, (_, index) => seeds.reduce((sum, seed) => sum + seed[index]!, 0) / seeds.length);
  const spread = mean.map((centre, index) => Math.sqrt(seeds.reduce((sum, seed) => sum + (seed[index]! - centre) ** 2, 0) / seeds.length));
  const gaussian = () => Math.sqrt(-2 * Math.log(1 - Math.random())) * Math.cos(2 * Math.PI * Math.random());
  return () => {
    const drawn = mean.map((centre, index) => centre + spread[index]! * gaussian());
    const norm = Math.hypot(...drawn);
    return `[${drawn.map((value) => value / norm).join(',')}]`;
  };
}

const bench: Bench = {
  title: 'Screening at 10,000 enrolled voices (origin, PGlite): time apart from the embedding',
  method: [
    `Enrolls ${REGISTRY_SIZE.toLocaleString('en')} voices under the bundled model in embedded PGlite (pgvector HNSW index of migration 0005):`,
    'one real enrollment of a so762 speaker, the rest synthetic voiceprints (Gaussian draws with the per-dimension mean and spread',
    `of the embeddings of 3 recordings each of ${SEED_SPEAKERS.length} other speakers, normalised), so the index holds vectors shaped like real ones. Then sends`,
    '`POST /api/v1/protect/screen` in process (Fastify inject, real multipart, real Opus recordings of about 3 s) with a platform key,',
    'alternating another recording of the enrolled speaker (one match: licence lookup, `voice.detected`) and a speaker nobody',
    'enrolled (no match), one at a time. Each call is timed whole, and its embedding (decode, VAD, fbank, ONNX) is timed inside',
    'the engine; "screening apart from embedding" is the difference per call: the rate-limit window, the multipart read, the',
    '1:N HNSW search (k = 5, iterative scan), scoring, and the transaction with its event and audit record. The search alone is',
    'then timed by itself over the same two embeddings.',
    `\`--quick\` uses ${QUICK_REGISTRY_SIZE.toLocaleString('en')} voices and fewer calls.`,
  ].join(' '),
  async run({ quick }) {
    const engine = await startTestEngine({ threads: 2 });
    const embedMs: number[] = [];
    const origin = await startTestOrigin({
      voiceprint: timedEngine(engine, embedMs),
      protection: {
        screeningPerMinute: 100_000,
        comparePerMinute: 100_000,
        licenseRequestsPerMinute: 10,
        licensingUrl: 'http://127.0.0.1/licensing',
      },
    });
    try {
      const db = origin.database.db;
      const owner = await loggedIn(origin);
      const platform = await platformKey(origin, 'Bench');
      const seedFiles = SEED_SPEAKERS.flatMap((speaker) => speakerRecordings(speaker, 0, 3));
      const seeds: Float32Array[] = [];
      // One at a time: the engine's queue holds 16 files.
      for (const file of seedFiles) seeds.push((await engine.embedFile(file)).embedding);
      const syntheticVoiceprint = voiceprintSampler(seeds);
      const enrolledId = await insertEnrolledVoice(db, engine, owner.userId, speakerRecordings(ENROLLED_SPEAKER, 0, 8));
      const size = quick ? QUICK_REGISTRY_SIZE : REGISTRY_SIZE;
      const started = performance.now();
      for (let offset = 1; offset < size; offset += 500) {
        const batch = Array.from({ length: Math.min(500, size - offset) }, () => randomUUID());
        const model = engine.model.name;
        await db.insert(voices).values(
          batch.map((id) => ({
            id,
            ownerId: owner.userId,
            name: 'Synthetic',
            status: 'ready' as const,
            model,
            speechSeconds: 20,
            quality: {},
          })),
        );
        await db
          .insert(voiceEmbeddings)
          .values(batch.map((id) => ({ voiceId: id, ownerId: owner.userId, model, embedding: syntheticVoiceprint() })));
      }
      const loadSeconds = (performance.now() - started) / 1000;

      const [probe] = speakerRecordings(ENROLLED_SPEAKER, 8, 1);
      const [stranger] = speakerRecordings(STRANGER, 0, 1);
      const screen = async (audio: Uint8Array) => {
        const before = embedMs.length;
        const callStarted = performance.now();
        const response = await origin.app.inject({
          method: 'POST',
          url: '/api/v1/protect/screen',
          headers: { 'x-api-key': platform.apiKey },
          payload: audioForm({ audio }, { platform_name: platform.name }),
        });
        const total = performance.now() - callStarted;
        if (response.statusCode !== 200 || embedMs.length !== before + 1)
          throw new Error(`screen answered ${response.statusCode}: ${response.body}`);
        return { total, apart: total - embedMs.at(-1)!, matches: (response.json() as { matches: { voice_id: string }[] }).matches };
      };
      for (let warm = 0; warm < 3; warm++) await screen(probe!);

      const calls = quick ? 20 : 200;
      const totals: number[] = [];
      const apart: number[] = [];
      let found = 0;
      let named = 0;
      let strangerMatches = 0;
      for (let call = 0; call < calls; call++) {
        const isProbe = call % 2 === 0;
        const result = await screen(isProbe ? probe! : stranger!);
        totals.push(result.total);
        apart.push(result.apart);
        if (isProbe && result.matches[0]?.voice_id === enrolledId) found++;
        if (isProbe && result.matches.some((match) => match.voice_id === enrolledId)) named++;
        if (!isProbe) strangerMatches += result.matches.length;
      }
      const embeds = embedMs.slice(-calls);
      // The 1:N search alone, as screening runs it (a transaction with the iterative-scan setting, k = 5).
      const probes = [await engine.embedFile(probe!), await engine.embedFile(stranger!)];
      const searchMs: number[] = [];
      for (let call = 0; call < calls; call++) {
        const searchStarted = performance.now();
        await db.transaction((tx) => nearestVoices(tx, probes[call % 2]!, null, SCREENING_MAX_MATCHES));
        searchMs.push(performance.now() - searchStarted);
      }
      const figures: Figure[] = [
        {
          key: 'screening.apart_from_embedding.p50_ms',
          label: `screening at ${size.toLocaleString('en')} voices, apart from embedding: p50`,
          value: round(median(apart), 1),
          unit: 'ms',
        },
        {
          key: 'screening.apart_from_embedding.p99_ms',
          label: `screening at ${size.toLocaleString('en')} voices, apart from embedding: p99`,
          value: round(percentile(apart, 0.99), 1),
          unit: 'ms',
        },
        {
          key: 'screening.search.p50_ms',
          label: `1:N search alone (k = ${SCREENING_MAX_MATCHES}): p50`,
          value: round(median(searchMs), 2),
          unit: 'ms',
        },
        {
          key: 'screening.search.p99_ms',
          label: `1:N search alone (k = ${SCREENING_MAX_MATCHES}): p99`,
          value: round(percentile(searchMs, 0.99), 2),
          unit: 'ms',
        },
        {
          key: 'screening.embedding.p50_ms',
          label: 'embedding of the sample (about 3 s of Opus): p50',
          value: round(median(embeds), 1),
          unit: 'ms',
        },
        { key: 'screening.total.p50_ms', label: 'screening call, whole: p50', value: round(median(totals), 1), unit: 'ms' },
        { key: 'screening.total.p99_ms', label: 'screening call, whole: p99', value: round(percentile(totals, 0.99), 1), unit: 'ms' },
      ];
      const notes = [
        `${calls} calls (${calls / 2} of the enrolled speaker, ${calls / 2} of a stranger); the enrolled voice was named in ${named} of ${calls / 2}, as the best match in ${found}; the stranger matched ${strangerMatches} voice(s) in all.`,
        `Loading ${size.toLocaleString('en')} voiceprints into PGlite with the HNSW index took ${round(loadSeconds, 1)} s.`,
      ];
      return { figures, notes };
    } finally {
      await origin.close();
      await engine.close();
    }
  },
};

export default bench;
