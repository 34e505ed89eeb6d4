/**
 * The sequential-enrollment evaluation (issue 12, item 5), through the public HTTP API of a running
 * service: every speaker of a speech folder is enrolled with half of its recordings, one after
 * another, each by an owner of its own; then every speaker's other half by another owner.
 *
 * Among distinct speakers, a refusal (409 identity_conflict) or a hold (201 pending_review) is a
 * false match: nobody else enrolled that person. Among re-enrollments it is the right answer.
 *
 * Standalone, on any folder with the dev manifest layout (`manifest.tsv`: path, set, speaker, seconds):
 *   npx tsx test/bench/sequential-enrollment.ts --speech ../shared/speech/dev [--speakers N] [--seed S]
 *     [--origin http://127.0.0.1:8080] [--json report.json] [--write]
 * With --write (dev, every speaker) the report goes beside the model it measured
 * (origin/src/voiceprint/models/<model>.sequential-enrollment.json) and calibrate.py writes its table
 * into the model card, between the card's markers.
 * Without --origin it starts the origin as `npm start` starts it (bundled model, default settings;
 * the gate is not needed), on a free port and a fresh data folder, and removes the folder afterwards. `npm run bench` runs it on ../shared/speech/dev
 * (test/bench/sequential-enrollment.bench.ts).
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { limits } from '@vip/shared-schema';
import { createOriginClient, ProblemError } from '@vip/shared-schema/client';
import { mulberry32 } from '../../origin/src/testing/random.js';
import { readSpeechManifest } from '../../origin/src/voiceprint/speech-manifest.js';
import { keepReportBesideModel } from '../../tools/voiceprint-training/model-card.js';
import { startOriginPlane } from '../support/service.js';
import { median, round } from './support/stats.js';

export interface Recording {
  path: string;
  seconds: number;
}

interface Speaker {
  id: string;
  set: string;
  /** Balanced by duration: the first half enrolls the speaker, the second re-enrolls them. */
  halves: [Recording[], Recording[]];
}

/** What one enrollment answered. */
type Answer = 'ready' | 'held' | 'refused' | 'too_little_speech';

export interface Counts {
  /** Enrollments the service decided on (ready, held or refused). */
  decided: number;
  refused: number;
  held: number;
}

export interface SetReport {
  set: string;
  speakers: number;
  /** First enrollments, each a speaker nobody enrolled before. */
  distinct: Counts & { percentRefused: number; percentRefusedOrHeld: number };
  /** Second enrollments of an enrolled speaker by another owner. */
  reenrollment: Counts & { percentRefusedOrHeld: number };
  /** Speakers whose first half alone held too little speech, enrolled with all their recordings (no second enrollment). */
  enrolledWithAll: number;
  /** Speakers with too little speech even in all their recordings: neither enrollment counted. */
  tooLittleSpeech: number;
  /** Speakers whose first enrollment was refused: their second half has no voice of theirs to meet. */
  firstRefused: number;
  /** Second halves with too little speech: not counted. */
  secondTooLittleSpeech: number;
}

export interface SequentialReport {
  speechDir: string;
  seed: number;
  speakers: number;
  model: string | null;
  /** Wall time of one enrollment request, median. */
  enrollP50Ms: number;
  sets: SetReport[];
  total: SetReport;
}

export interface SequentialOptions {
  speechDir: string;
  /** An origin to use as it is; otherwise one is started. */
  originUrl?: string;
  /** Only the first N speakers of the shuffled order (all by default). */
  speakers?: number;
  seed?: number;
  log?: (line: string) => void;
}

/** The speakers of a manifest, their recordings split in two halves of about equal duration. */
export function readSpeakers(speechDir: string): Speaker[] {
  const bySpeaker = new Map<string, { set: string; recordings: Recording[] }>();
  for (const { path, set, speaker: id, seconds } of readSpeechManifest(speechDir)) {
    const speaker = bySpeaker.get(id) ?? { set, recordings: [] };
    speaker.recordings.push({ path, seconds });
    bySpeaker.set(id, speaker);
  }
  return [...bySpeaker].map(([id, { set, recordings }]) => {
    const halves: [Recording[], Recording[]] = [[], []];
    const totals: [number, number] = [0, 0];
    // Longest first, each to the lighter half: the halves differ by at most one recording's length.
    for (const recording of [...recordings].sort((a, b) => b.seconds - a.seconds || a.path.localeCompare(b.path))) {
      const lighter = totals[0] <= totals[1] ? 0 : 1;
      halves[lighter].push(recording);
      totals[lighter] += recording.seconds;
    }
    return { id, set, halves };
  });
}

/** A deterministic shuffle (mulberry32), so sets are interleaved and a run can be repeated. */
export function shuffled<T>(items: readonly T[], seed: number): T[] {
  const random = mulberry32(seed);
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

const TOO_LITTLE_SPEECH = new Set(['too_short', 'no_speech']);

/** The service names a single unusable file as `"take.wav" (file 3 of 8): …` (1-based); the index, or null when the problem is the whole upload. */
export function fileNamedIn(detail: string): number | null {
  const match = /^(?:".*" )?\(file (\d+) of \d+\):/.exec(detail);
  return match ? Number(match[1]) - 1 : null;
}

export async function runSequentialEnrollment(options: SequentialOptions): Promise<SequentialReport> {
  const log = options.log ?? (() => {});
  const seed = options.seed ?? 1;
  const speechDir = resolve(options.speechDir);
  const all = shuffled(readSpeakers(speechDir), seed);
  const speakers = all.slice(0, options.speakers ?? all.length);
  // One address registers an owner per speaker: its own origin admits that many registrations a
  // minute; another origin's limit is waited out (429 with Retry-After), as a client would.
  const service = options.originUrl ? null : await startOriginPlane({ env: { REGISTRATIONS_PER_MINUTE: '100000' } });
  const originUrl = options.originUrl ?? service!.originUrl;
  const timings: number[] = [];
  let model: string | null = null;
  let owners = 0;

  /** A busy engine (503) or a rate limit (429), with Retry-After, is load, not an answer about the speaker: wait and ask again. */
  const whenAdmitted = async <T>(call: () => Promise<T>): Promise<T> => {
    for (;;) {
      try {
        return await call();
      } catch (error) {
        if (!(error instanceof ProblemError) || (error.status !== 503 && error.status !== 429)) throw error;
        await new Promise((resolve) => setTimeout(resolve, (error.retryAfter ?? 5) * 1000));
      }
    }
  };

  /**
   * A new owner (self-registered), their biometric consent, and one enrollment. A file the service
   * names as holding too little speech (`"take.wav" (file 3 of 8): …`) is left out and the rest sent again, as an
   * owner would; too little speech in all of them together is the answer `too_little_speech`.
   */
  const enrollAsNewOwner = async (speaker: Speaker, recordings: Recording[]): Promise<Answer> => {
    const credentials = { email: `seq-${Date.now().toString(36)}-${++owners}@owners.example`, password: 'sequential-enrollment-password' };
    const anonymous = createOriginClient({ baseUrl: originUrl });
    await whenAdmitted(() => anonymous.auth.register(credentials));
    const session = await anonymous.auth.login(credentials);
    const owner = createOriginClient({ baseUrl: originUrl, bearerToken: session.access_token });
    const consent = await owner.biometricConsent.grant({ type: 'biometric', statement_version: 'sequential-enrollment', accepted: true });
    // An enrollment takes at most `enrollMaxFiles` files: the longest of them.
    let files = [...recordings].sort((a, b) => b.seconds - a.seconds).slice(0, limits.enrollMaxFiles);
    while (files.length > 0) {
      const audio = files.map((recording) => ({
        data: new Uint8Array(readFileSync(join(speechDir, recording.path))),
        filename: basename(recording.path),
      }));
      const started = performance.now();
      try {
        const voice = await whenAdmitted(() => owner.voices.enroll({ name: speaker.id, consent_id: consent.consent_id, audio }));
        model = voice.model;
        return voice.status === 'pending_review' ? 'held' : 'ready';
      } catch (error) {
        if (error instanceof ProblemError && error.code === 'identity_conflict') return 'refused';
        if (!(error instanceof ProblemError && TOO_LITTLE_SPEECH.has(error.code))) throw error;
        const unusable = fileNamedIn(error.detail);
        if (unusable === null) return 'too_little_speech';
        files = files.filter((_, index) => index !== unusable);
      } finally {
        timings.push(performance.now() - started);
      }
    }
    return 'too_little_speech';
  };

  type Outcome = { speaker: Speaker; first: Answer; usedAll: boolean; second: Answer | null };
  const outcomes: Outcome[] = [];
  try {
    for (const [index, speaker] of speakers.entries()) {
      let first = await enrollAsNewOwner(speaker, speaker.halves[0]);
      let usedAll = false;
      // Too little speech in half of it: the speaker is enrolled with everything and not re-enrolled.
      if (first === 'too_little_speech' && speaker.halves[1].length > 0) {
        first = await enrollAsNewOwner(speaker, [...speaker.halves[0], ...speaker.halves[1]]);
        usedAll = true;
      }
      outcomes.push({ speaker, first, usedAll, second: null });
      log(`first  ${index + 1}/${speakers.length} ${speaker.id}: ${first}${usedAll ? ' (all recordings)' : ''}`);
    }
    for (const [index, outcome] of outcomes.entries()) {
      if (outcome.usedAll || outcome.first === 'too_little_speech' || outcome.first === 'refused') continue;
      if (outcome.speaker.halves[1].length === 0) continue;
      outcome.second = await enrollAsNewOwner(outcome.speaker, outcome.speaker.halves[1]);
      log(`second ${index + 1}/${outcomes.length} ${outcome.speaker.id}: ${outcome.second}`);
    }
  } finally {
    if (service) {
      await service.stop();
      rmSync(service.dataDir, { recursive: true, force: true });
    }
  }

  const summarize = (set: string, rows: Outcome[]): SetReport => {
    const count = (answers: (Answer | null)[]): Counts => {
      const decided = answers.filter((answer) => answer === 'ready' || answer === 'held' || answer === 'refused');
      return {
        decided: decided.length,
        refused: decided.filter((answer) => answer === 'refused').length,
        held: decided.filter((answer) => answer === 'held').length,
      };
    };
    const percent = (part: number, whole: number) => (whole === 0 ? 0 : round((100 * part) / whole, 2));
    const distinct = count(rows.map((row) => row.first));
    const reenrollment = count(rows.map((row) => row.second));
    return {
      set,
      speakers: rows.length,
      distinct: {
        ...distinct,
        percentRefused: percent(distinct.refused, distinct.decided),
        percentRefusedOrHeld: percent(distinct.refused + distinct.held, distinct.decided),
      },
      reenrollment: { ...reenrollment, percentRefusedOrHeld: percent(reenrollment.refused + reenrollment.held, reenrollment.decided) },
      enrolledWithAll: rows.filter((row) => row.usedAll && row.first !== 'too_little_speech').length,
      tooLittleSpeech: rows.filter((row) => row.first === 'too_little_speech').length,
      firstRefused: rows.filter((row) => row.first === 'refused').length,
      secondTooLittleSpeech: rows.filter((row) => row.second === 'too_little_speech').length,
    };
  };
  const sets = [...new Set(outcomes.map((outcome) => outcome.speaker.set))].sort();
  return {
    speechDir,
    seed,
    speakers: speakers.length,
    model,
    enrollP50Ms: timings.length ? round(median(timings), 0) : 0,
    sets: sets.map((set) =>
      summarize(
        set,
        outcomes.filter((outcome) => outcome.speaker.set === set),
      ),
    ),
    total: summarize('all', outcomes),
  };
}

/** One line per set, as the model card and the closing note quote them. */
export function describeSet(report: SetReport): string {
  const { distinct, reenrollment } = report;
  return (
    `${report.set}: ${report.speakers} speakers; distinct ${distinct.decided}: refused ${distinct.refused} (${distinct.percentRefused} %), ` +
    `held ${distinct.held}, refused or held ${distinct.percentRefusedOrHeld} %; re-enrollments ${reenrollment.decided}: ` +
    `refused ${reenrollment.refused}, held ${reenrollment.held}, refused or held ${reenrollment.percentRefusedOrHeld} %; ` +
    `enrolled with all recordings ${report.enrolledWithAll}, too little speech ${report.tooLittleSpeech}, ` +
    `first refused ${report.firstRefused}, second half too little speech ${report.secondTooLittleSpeech}`
  );
}

async function main() {
  const { values } = parseArgs({
    options: {
      speech: { type: 'string' },
      origin: { type: 'string' },
      speakers: { type: 'string' },
      seed: { type: 'string', default: '1' },
      json: { type: 'string' },
      write: { type: 'boolean', default: false },
    },
  });
  if (!values.speech)
    throw new Error(
      'usage: sequential-enrollment.ts --speech <dir with manifest.tsv> [--speakers N] [--seed S] [--origin URL] [--json FILE]',
    );
  const report = await runSequentialEnrollment({
    speechDir: values.speech,
    originUrl: values.origin,
    speakers: values.speakers === undefined ? undefined : Number(values.speakers),
    seed: Number(values.seed),
    log: (line) => console.error(line),
  });
  console.log(`model ${report.model}, ${report.speakers} speakers, seed ${report.seed}, enrollment p50 ${report.enrollP50Ms} ms`);
  for (const set of [...report.sets, report.total]) console.log(describeSet(set));
  if (values.json) writeFileSync(values.json, `${JSON.stringify(report, null, 2)}\n`);
  if (values.write) {
    if (report.model === null || values.speakers !== undefined) throw new Error('--write needs a whole run that enrolled with a model');
    // The folder's name only: the report is committed, the machine's path is not the model's.
    keepReportBesideModel(report.model, 'sequential-enrollment', { ...report, speechDir: basename(resolve(report.speechDir)) });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
  });
}
