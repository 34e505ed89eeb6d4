import { type ComparisonResult, ProblemError, uuid } from '@vip/shared-schema';
import type { Principal } from '../auth/guard.js';
import type { Database } from '../db/client.js';
import type { MultipartForm } from '../http/multipart-form.js';
import type { TaggedEmbedding, VoiceprintEngine } from '../voiceprint/index.js';
import * as voiceStore from '../voices/store.js';

export interface DetectionServiceDeps {
  db: Database;
  /** Absent in processes that serve no audio (tests of other domains): compare answers 503. */
  engine?: VoiceprintEngine;
}

const formProblem = (field: string, message: string) =>
  new ProblemError('validation_failed', 'The multipart form is invalid.', { errors: [{ field: `body.${field}`, message }] });

export class DetectionService {
  constructor(private readonly deps: DetectionServiceDeps) {}

  /** `audio1` against `audio2`, or against the stored voiceprint of one of the caller's voices (`voice_id`). */
  async compare(principal: Principal, form: MultipartForm): Promise<ComparisonResult> {
    const engine = this.deps.engine;
    if (!engine) throw new ProblemError('unavailable', 'This process has no voiceprint engine.');
    const audio1 = form.files.get('audio1')?.[0];
    const audio2 = form.files.get('audio2')?.[0];
    const voiceId = form.fields.get('voice_id');
    if (!audio1) throw formProblem('audio1', 'an audio file is required');
    if (audio2 && voiceId !== undefined) throw formProblem('voice_id', 'give audio2 or voice_id, not both');
    if (!audio2 && voiceId === undefined) throw formProblem('audio2', 'give audio2 or voice_id');

    let first: TaggedEmbedding;
    let second: TaggedEmbedding;
    if (audio2) {
      [first, second] = await Promise.all([engine.embedFile(audio1), engine.embedFile(audio2)]);
    } else {
      // Looked up before any audio is processed: a wrong id costs nothing.
      second = await this.enrolledEmbedding(principal, voiceId!);
      first = await engine.embedFile(audio1);
    }
    const similarity = engine.cosine(first, second);
    const threshold = engine.threshold(first.model);
    return {
      similarity,
      is_same_speaker: similarity >= threshold,
      embedding1_hash: engine.embeddingHash(first.embedding, first.model),
      embedding2_hash: engine.embeddingHash(second.embedding, second.model),
      threshold,
      model: first.model,
    };
  }

  /** Only the caller's own voices: another owner's answers exactly like a missing one. */
  private async enrolledEmbedding(principal: Principal, voiceId: string): Promise<TaggedEmbedding> {
    if (!uuid.safeParse(voiceId).success) throw formProblem('voice_id', 'must be a UUID');
    const voice = await voiceStore.findVoiceOfOwner(this.deps.db, principal.userId, voiceId);
    const stored = voice ? await voiceStore.findEmbeddingOfVoice(this.deps.db, voice.id) : null;
    if (!stored) throw new ProblemError('not_found', 'No such voice.');
    return stored;
  }
}
