import { type ComparisonResult, ProblemError, uuid } from '@vip/shared-schema';
import { type Caller, credentialOf } from '../auth/index.js';
import type { Database } from '../db/client.js';
import { recordEvent } from '../events/index.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { RateLimiter } from '../http/rate-limit.js';
import { holdsLiveLicense } from '../registry/index.js';
import type { Runtime } from '../runtime.js';
import { findEmbeddingOfVoice, findVoiceOfOwner, nearestVoice } from '../voice-records/store.js';
import type { EmbedFileResult, TaggedEmbedding, VoiceprintEngine } from '../voiceprint/index.js';

export interface DetectionServiceDeps {
  db: Database;
  runtime: Runtime;
  /** Absent in processes that serve no audio (tests of other domains): compare answers 503. */
  engine?: VoiceprintEngine;
  limiter: RateLimiter;
  comparePerMinute: number;
  /** Variant B (docs/CONTRACT.md#events): a platform's comparison that matches an enrolled voice emits `voice.detected`. */
  reportDetections: boolean;
}

const formProblem = (field: string, message: string) =>
  new ProblemError('validation_failed', 'The multipart form is invalid.', { errors: [{ field: `body.${field}`, message }] });

export class DetectionService {
  constructor(private readonly deps: DetectionServiceDeps) {}

  /**
   * The per-credential limit, before the form is read: each answer is a raw cosine with its LLR and
   * probability, so unlimited comparisons would be a scoring oracle. The RateLimit headers to answer with.
   */
  admit(caller: Caller): Promise<Record<string, string>> {
    return this.deps.limiter.take({ name: 'compare', callsPerMinute: this.deps.comparePerMinute }, credentialOf(caller));
  }

  /** Call after admit. `audio1` against `audio2`, or against the stored voiceprint of one of the caller's voices (`voice_id`). */
  async compare(caller: Caller, form: MultipartForm): Promise<ComparisonResult> {
    const engine = this.deps.engine;
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    const audio1 = form.files.get('audio1')?.[0];
    const audio2 = form.files.get('audio2')?.[0];
    const voiceId = form.fields.get('voice_id');
    if (!audio1) throw formProblem('audio1', 'an audio file is required');
    if (audio2 && voiceId !== undefined) throw formProblem('voice_id', 'give audio2 or voice_id, not both');
    if (!audio2 && voiceId === undefined) throw formProblem('audio2', 'give audio2 or voice_id');

    let first: EmbedFileResult;
    let second: TaggedEmbedding & { speechSeconds: number };
    let condition: 'sample_vs_sample' | 'sample_vs_enrolled';
    if (audio2) {
      [first, second] = await Promise.all([engine.embedFile(audio1.bytes), engine.embedFile(audio2.bytes)]);
      condition = 'sample_vs_sample';
    } else {
      if (caller.kind !== 'user') throw formProblem('voice_id', "only a voice's owner may compare with it");
      // Looked up before any audio is processed: a wrong id costs nothing.
      second = await this.enrolledEmbedding(caller.userId, voiceId!);
      first = await engine.embedFile(audio1.bytes);
      condition = 'sample_vs_enrolled';
    }
    const judgement = engine.judge(condition, first, second);
    if (caller.kind === 'platform' && this.deps.reportDetections) {
      await this.reportDetections(caller.platformName, [first, second], engine);
    }
    return {
      similarity: judgement.similarity,
      normalized_score: judgement.normalizedScore,
      is_same_speaker: judgement.isSameSpeaker,
      embedding1_hash: engine.embeddingHash(first.embedding, first.model),
      embedding2_hash: engine.embeddingHash(second.embedding, second.model),
      threshold: judgement.threshold,
      model: first.model,
      condition,
      llr: judgement.calibrated?.llr ?? null,
      probability: judgement.calibrated?.probability ?? null,
    };
  }

  /**
   * Each uploaded recording is searched 1:N among enrolled voices; a match at or above the model's
   * sample-vs-enrolled search point (a 1:N point, operating-points.ts) tells the voice's owner which platform holds a recording of it (once per voice per
   * comparison). The recording itself is not kept, so `audio_url` is null; `action_required` is
   * false only when the platform holds a live licence of the voice.
   */
  private async reportDetections(
    platformName: string,
    uploads: Array<TaggedEmbedding & { speechSeconds: number }>,
    engine: VoiceprintEngine,
  ): Promise<void> {
    const now = this.deps.runtime.clock.now();
    await this.deps.db.transaction(async (tx) => {
      const reported = new Set<string>();
      for (const upload of uploads) {
        const nearest = await nearestVoice(tx, upload, null);
        const point = engine.points(upload.model).sample_vs_enrolled.search;
        if (!nearest || nearest.similarity < point || reported.has(nearest.voiceId)) continue;
        reported.add(nearest.voiceId);
        const licensed = await holdsLiveLicense(tx, nearest.voiceId, platformName, now);
        const shorterSeconds = Math.min(upload.speechSeconds, nearest.speechSeconds);
        const calibrated = engine.score(upload.model, 'sample_vs_enrolled', nearest.similarity, shorterSeconds);
        const fields = {
          owner_id: nearest.ownerId,
          platform: platformName,
          // The calibrated probability where the model has one (the same figure screening answers with).
          confidence: calibrated?.probability ?? nearest.similarity,
          audio_url: null,
          action_required: !licensed,
        };
        await recordEvent(tx, { type: 'voice.detected', voiceId: nearest.voiceId, ownerId: nearest.ownerId, fields }, now);
      }
    });
  }

  /** Only the caller's own voices: another owner's answers exactly like a missing one. */
  private async enrolledEmbedding(ownerId: string, voiceId: string): Promise<TaggedEmbedding & { speechSeconds: number }> {
    if (!uuid.safeParse(voiceId).success) throw formProblem('voice_id', 'must be a UUID');
    const voice = await findVoiceOfOwner(this.deps.db, ownerId, voiceId);
    const stored = voice ? await findEmbeddingOfVoice(this.deps.db, voice.id) : null;
    if (!voice || !stored) throw new ProblemError('not_found', 'No such voice.');
    return { ...stored, speechSeconds: voice.speechSeconds };
  }
}
