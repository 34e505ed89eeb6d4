import {
  type AuditRecord,
  auditCaller,
  buildAuditRecord,
  ProblemError,
  platformNameMismatch,
  platformName as platformNameSchema,
  SCREENING_MAX_MATCHES,
  type ScreeningMatch,
  type ScreeningResult,
} from '@vip/shared-schema';
import { queueAuditRecords } from '../audit/index.js';
import { actorOf, type Caller, credentialOf } from '../auth/index.js';
import type { Database, Executor } from '../db/client.js';
import { recordEvent } from '../events/index.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { holdsLiveLicense } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import { type NearVoice, nearestVoices } from '../voice-records/store.js';
import type { TaggedEmbedding, VoiceprintEngine } from '../voiceprint/index.js';

export interface ScreeningServiceDeps {
  db: Database;
  runtime: Runtime;
  limiter: RateLimiter;
  /** Absent in processes that serve no audio: screening answers 503. */
  engine?: VoiceprintEngine;
  screeningPerMinute: number;
  /** The public licensing page; a match's `license_url` is this with `?voice_id=`. */
  licensingUrl: string;
}

const formProblem = (field: string, message: string) =>
  new ProblemError('validation_failed', 'The multipart form is invalid.', { errors: [{ field: `body.${field}`, message }] });

interface ScoredMatch extends ProtectedMatch {
  licensed: boolean;
}

export interface ProtectedMatch {
  voice: NearVoice;
  /** The calibrated probability, or the cosine for an uncalibrated model. */
  confidence: number;
}

/** What a search needs of a sample: its embedding and how much speech it holds (one file or several combined). */
export type ScreenedSample = TaggedEmbedding & { speechSeconds: number };

/**
 * Screening's rule for "sounds like a protected voice", also used where a file is judged
 * (provenance): up to SCREENING_MAX_MATCHES voices at or above the model's calibrated
 * sample-vs-enrolled search point, best first. Voices held for review (or in any state but ready)
 * are not disclosed: a match names a voice, which only a voice in the registry may have.
 */

export async function protectedVoicesLike(tx: Executor, engine: VoiceprintEngine, sample: ScreenedSample): Promise<ProtectedMatch[]> {
  const point = engine.points(sample.model).sample_vs_enrolled.search;
  const nearest = await nearestVoices(tx, sample, null, SCREENING_MAX_MATCHES);
  return nearest
    .filter((voice) => voice.similarity >= point && voice.status === 'ready')
    .map((voice) => {
      const shorterSeconds = Math.min(sample.speechSeconds, voice.speechSeconds);
      const calibrated = engine.score(sample.model, 'sample_vs_enrolled', voice.similarity, shorterSeconds);
      return { voice, confidence: calibrated?.probability ?? voice.similarity };
    });
}

/**
 * Screening (docs/CONTRACT.md#closing-the-loop-receipts-pages): which protected voices a recording is. A 1:N search over the
 * enrolled voices at the model's calibrated sample-vs-enrolled search point, answering only the
 * voices at or above it (nothing about the others). The recording and its embedding live only in
 * this call; the audit entry holds the embedding's hash and the matches.
 */
export class ScreeningService {
  constructor(private readonly deps: ScreeningServiceDeps) {}

  /**
   * Who may screen, and the per-credential limit: both before the form is read, so a flood costs the
   * service one row update per call, not an upload.
   */
  async admit(caller: Caller): Promise<void> {
    if (caller.kind === 'user' && caller.role !== 'admin') {
      throw new ProblemError('forbidden', 'Screening is for platform API keys and administrators.');
    }
    await this.deps.limiter.take({ name: 'screening', callsPerMinute: this.deps.screeningPerMinute }, credentialOf(caller));
  }

  /** Call after admit. */
  async screen(caller: Caller, form: MultipartForm): Promise<ScreeningResult> {
    const { db, runtime } = this.deps;
    const engine = this.deps.engine;
    const platformName = this.platformOf(caller, form.fields.get('platform_name'));
    const audio = form.files.get('audio') ?? [];
    if (audio.length === 0) throw formProblem('audio', 'an audio file is required');
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');

    // Several recordings of one speaker are one sample, combined as an enrollment combines its files.
    const sample =
      audio.length === 1
        ? await engine.embedFile(audio[0]!.bytes)
        : await engine.embedMany(
            audio.map((file) => file.bytes),
            audio.map((file) => file.filename),
            { minSpeechSeconds: 0 },
          );
    const checkId = runtime.newId();
    const now = runtime.clock.now();
    const matches = await db.transaction(async (tx) => {
      const scored = await this.matchesOf(tx, engine, sample, platformName, now);
      for (const match of scored.filter((each) => !each.licensed)) {
        // docs/CONTRACT.md#events: the owner learns which platform holds a recording of the voice; the recording is not kept.
        const fields = {
          owner_id: match.voice.ownerId,
          platform: platformName,
          confidence: match.confidence,
          audio_url: null,
          action_required: true,
        };
        await recordEvent(tx, { type: 'voice.detected', voiceId: match.voice.voiceId, ownerId: match.voice.ownerId, fields }, now);
      }
      await queueAuditRecords(
        tx,
        [
          this.auditRecord(checkId, caller, platformName, engine.embeddingHash(sample.embedding, sample.model), scored, now),
          ...scored.map((match) => this.matchRecord(runtime.newId(), checkId, caller, platformName, match, now)),
        ],
        now,
      );
      return scored;
    });
    return { check_id: checkId, model: sample.model, matches: matches.map((match) => this.answer(match)) };
  }

  /** A key screens as its own platform only, as at the gate; an administrator names one. */
  private platformOf(caller: Caller, given: string | undefined): string {
    if (given === undefined) throw formProblem('platform_name', 'required');
    const parsed = platformNameSchema.safeParse(given);
    if (!parsed.success) throw formProblem('platform_name', parsed.error.issues[0]?.message ?? 'not a platform name');
    const mismatch = caller.kind === 'platform' ? platformNameMismatch(caller.platformName, parsed.data) : null;
    if (mismatch) throw new ProblemError('platform_mismatch', mismatch);
    return parsed.data;
  }

  /** The protected voices the sample sounds like, each with whether this platform holds a live licence of it. */
  private async matchesOf(tx: Executor, engine: VoiceprintEngine, sample: ScreenedSample, platformName: string, now: Date) {
    const scored: ScoredMatch[] = [];
    for (const match of await protectedVoicesLike(tx, engine, sample)) {
      scored.push({ ...match, licensed: await holdsLiveLicense(tx, match.voice.voiceId, platformName, now) });
    }
    return scored;
  }

  private answer(match: ScoredMatch): ScreeningMatch {
    const url = new URL(this.deps.licensingUrl);
    url.searchParams.set('voice_id', match.voice.voiceId);
    return { voice_id: match.voice.voiceId, confidence: match.confidence, license_url: url.toString() };
  }

  /**
   * One entry per screening, under the screening platform (which reads it in its audit log) and no
   * voice (so one owner reading the entries of their voice never sees another voice's match). The
   * reason holds the sample's embedding hash and each match with its confidence and cosine.
   */
  private auditRecord(
    checkId: string,
    caller: Caller,
    platformName: string,
    sampleHash: string,
    matches: readonly ScoredMatch[],
    now: Date,
  ): AuditRecord {
    const listed = matches.map((match) => `${match.voice.voiceId}:${match.confidence.toFixed(4)}:${match.voice.similarity.toFixed(4)}`);
    return buildAuditRecord('screening', {
      check_id: checkId,
      decided_at: now,
      platform_name: platformName,
      reason: `sample=${sampleHash};matches=${listed.join(',')}`,
      ...auditCaller(actorOf(caller)),
    });
  }

  /**
   * One entry per matched voice, under that voice, so that its owner reads in the voice's timeline
   * that a platform screened a recording of it. It names the platform (as the owner's gate entries
   * do) and the screening's check id, and holds this voice's match only: no other voice, no sample
   * hash, and no account or key id of whoever uploaded the recording.
   */
  private matchRecord(
    checkId: string,
    screeningCheckId: string,
    caller: Caller,
    platformName: string,
    match: ScoredMatch,
    now: Date,
  ): AuditRecord {
    return buildAuditRecord('screening', {
      check_id: checkId,
      decided_at: now,
      voice_id: match.voice.voiceId,
      platform_name: platformName,
      reason: `screening_match:${screeningCheckId}:${match.confidence.toFixed(4)}`,
      license_status: match.licensed ? 'licensed' : 'unlicensed',
      // The type alone: the owner reading it learns a platform screened, not which of its keys.
      caller_type: actorOf(caller).type,
    });
  }
}
