import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  type AuditActor,
  type AuditRecord,
  auditCaller,
  buildAuditRecord,
  limits,
  ProblemError,
  SPOKEN_CONSENT_STATEMENT,
  SPOKEN_CONSENT_STATEMENTS,
  type SpokenConsentEvidence,
  spokenConsentStatementOf,
} from '@vip/shared-schema';
import { isCredentialContainer, scanContainer } from '@vip/shared-schema/provenance/container-scan';
import { queueAuditRecords } from '../audit/index.js';
import { actorOf, type Principal } from '../auth/index.js';
import { recordSpokenEvidence } from '../biometric-consent/index.js';
import type { SpokenConsentSettings } from '../config.js';
import type { Database, Executor } from '../db/client.js';
import type { ChallengeRow } from '../db/schema.js';
import type { MultipartForm, UploadedFile } from '../http/multipart-form.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Runtime } from '../runtime.js';
import { findVoiceOfOwner } from '../voice-records/store.js';
import { decodeAudio, sniffContainer, type TrialSide, type VoiceprintEngine } from '../voiceprint/index.js';
import { checkConsentWords, PHRASE_WORDS, spokenWords, type WordCalibration, type WordNotSaid, wordThresholdsOf } from './consent-words.js';
import * as store from './store.js';
import { WordsChecker } from './words.js';

export interface SpokenConsentDeps {
  db: Database;
  runtime: Runtime;
  limiter: RateLimiter;
  settings: SpokenConsentSettings;
}

/** What an enrollment form carries for the spoken consent. */
export interface SpokenConsentSubmission {
  challengeId: string;
  recording: UploadedFile;
}

/** A consent recording that passed the checks, waiting for the enrollment's transaction. */
export interface VerifiedConsent {
  challengeId: string;
  recording: UploadedFile;
  evidence: SpokenConsentEvidence;
}

/** Written by calibrate.ts on dev/ (docs/DECISIONS.md#spoken-consent). */
const calibration = JSON.parse(readFileSync(new URL('./calibration.json', import.meta.url), 'utf8')) as {
  statement: { min_score: number };
  word: WordCalibration;
};

/**
 * How long after its expiry a challenge is kept: an enrollment that checked its challenge just
 * before the expiry still finds it to spend when its audio has been processed.
 */
export const EXPIRED_CHALLENGE_KEPT_MS = limits.consentChallengeTtlSeconds * 1000;

const CHALLENGE_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class SpokenConsentService {
  private words: Promise<WordsChecker> | undefined;

  constructor(private readonly deps: SpokenConsentDeps) {}

  /**
   * Loads the decoder and checks that it can spell every statement version, its negations and every
   * phrase word (main.ts calls it at start-up).
   */
  ready(): Promise<WordsChecker> {
    this.words ??= WordsChecker.create().then((checker) => {
      const statements = Object.values(SPOKEN_CONSENT_STATEMENTS).flatMap((statement) => [statement.text, ...statement.negations]);
      const words = [...statements, ...PHRASE_WORDS].flatMap(spokenWords);
      const unknown = [...new Set(words)].filter((word) => !checker.knows(word));
      if (unknown.length > 0) throw new Error(`The speech decoder's dictionary lacks ${unknown.join(', ')}`);
      return checker;
    });
    return this.words;
  }

  /** The limit per owner, before a challenge is issued. The RateLimit headers to answer with. */
  admitChallenge(principal: Principal): Promise<Record<string, string>> {
    return this.deps.limiter.take(
      { name: 'consent-challenge', callsPerMinute: limits.consentChallengesPerOwnerPerMinute },
      `user:${principal.userId}`,
    );
  }

  /** The background round (jobs/background-jobs.ts): deletes challenges expired longer ago than EXPIRED_CHALLENGE_KEPT_MS. */
  deleteExpiredChallenges(): Promise<number> {
    const now = this.deps.runtime.clock.now().getTime();
    return store.deleteChallengesExpiredBefore(this.deps.db, new Date(now - EXPIRED_CHALLENGE_KEPT_MS));
  }

  /** Call after admitChallenge. */
  async issueChallenge(principal: Principal) {
    const { db, runtime } = this.deps;
    await this.ready();
    const now = runtime.clock.now();
    const row = await store.insertChallenge(db, {
      id: runtime.newId(),
      ownerId: principal.userId,
      statementVersion: SPOKEN_CONSENT_STATEMENT.version,
      language: SPOKEN_CONSENT_STATEMENT.language,
      phrase: randomPhrase(runtime),
      createdAt: now,
      expiresAt: new Date(now.getTime() + limits.consentChallengeTtlSeconds * 1000),
    });
    return {
      challenge_id: row.id,
      statement: SPOKEN_CONSENT_STATEMENT.text,
      statement_version: row.statementVersion,
      phrase: row.phrase,
      language: SPOKEN_CONSENT_STATEMENT.language,
      expires_at: row.expiresAt.toISOString(),
    };
  }

  /**
   * The spoken consent of an enrollment or dispute form: null when none was sent and none is required
   * (a dispute always requires one). Its challenge is checked here, before any audio is processed.
   */
  submissionOf(principal: Principal, form: MultipartForm, need: 'required'): Promise<SpokenConsentSubmission>;
  submissionOf(principal: Principal, form: MultipartForm): Promise<SpokenConsentSubmission | null>;
  async submissionOf(principal: Principal, form: MultipartForm, need?: 'required'): Promise<SpokenConsentSubmission | null> {
    const recording = form.files.get('spoken_consent')?.[0];
    const challengeId = form.fields.get('challenge_id');
    const optional = need !== 'required' && this.deps.settings.mode === 'when_given';
    if (!recording && challengeId === undefined && optional) return null;
    const errors = [
      ...(recording ? [] : [{ field: 'body.spoken_consent', message: 'a recording of the statement and the phrase is required' }]),
      ...(challengeId !== undefined && CHALLENGE_ID.test(challengeId)
        ? []
        : [{ field: 'body.challenge_id', message: 'the challenge_id of POST /api/v1/consents/challenges is required' }]),
    ];
    if (errors.length > 0) {
      throw new ProblemError(
        'validation_failed',
        `This service ${need === 'required' ? 'takes a dispute' : 'enrolls a voice'} only with its spoken consent: ask for a challenge (POST /api/v1/consents/challenges), read its statement and then its phrase in the voice being ${need === 'required' ? 'disputed' : 'enrolled'}, and send that recording as spoken_consent with the challenge_id.`,
        { errors },
      );
    }
    const submission = { challengeId: challengeId!, recording: recording! };
    this.usableChallenge(await store.findChallenge(this.deps.db, submission.challengeId), principal);
    return submission;
  }

  /**
   * The voice and the words of the consent recording (the challenge was checked by submissionOf):
   * read by the speaker of `enrollment` at the model's sample-vs-enrolled point, then the statement,
   * then the phrase. A failed check throws its own problem; a words problem says what was heard.
   */
  async verify(
    principal: Principal,
    submission: SpokenConsentSubmission,
    enrollment: TrialSide,
    engine: VoiceprintEngine,
  ): Promise<VerifiedConsent> {
    const challenge = this.usableChallenge(await store.findChallenge(this.deps.db, submission.challengeId), principal);
    refuseContentCredentials(submission.recording.bytes);
    const audio = await decodeAudio(submission.recording.bytes, {
      maxBytes: limits.audioMaxBytes,
      maxSeconds: limits.spokenConsentMaxSeconds,
      minSeconds: 0.5,
    });
    // The watermark is read in the same pool job as the voice, from the same decoding, in its bounded windows.
    const consentVoice = await engine.embedFile(submission.recording.bytes, { readWatermark: true });
    if (consentVoice.watermark?.found) {
      throw syntheticProblem(
        "it carries this service's audio watermark, which platforms write into the speech they synthesize (docs/WATERMARK.md)",
      );
    }
    const speaker = engine.judge('sample_vs_enrolled', consentVoice, enrollment);
    if (!speaker.isSameSpeaker) {
      throw new ProblemError(
        'consent_speaker_mismatch',
        'The spoken consent was read by another voice than the one in the enrollment recordings.',
      );
    }
    // A challenge issued before the statement's upgrade is read against the statement it showed.
    const statement = spokenConsentStatementOf(challenge.statementVersion);
    if (!statement) throw challengeProblem();
    const verdict = checkConsentWords(
      await this.ready(),
      audio.samples,
      { statement: statement.text, negations: statement.negations, phrase: challenge.phrase },
      {
        minStatementScore: calibration.statement.min_score,
        word: wordThresholdsOf(calibration.word),
        phraseMaxWrongWords: this.deps.settings.phraseMaxWrongWords,
      },
    );
    if (!verdict.statement.passed) {
      const heard = verdict.heard === '' ? 'nothing the statement could be' : `"${verdict.heard}"`;
      const notSaid = verdict.statement.words_not_said;
      throw new ProblemError(
        'consent_statement_not_spoken',
        notSaid.length > 0
          ? `The consent statement was not heard in the spoken_consent recording: the decoder had to force in ${describeWordsNotSaid(notSaid)}; the audio there is not those words. Heard (with them forced in): ${heard}. Read the statement as shown, word for word, then the phrase.`
          : `The consent statement was not heard in the spoken_consent recording. Heard: ${heard} (score ${verdict.statement.score}, at least ${calibration.statement.min_score} needed). Read the statement as shown, then the phrase.`,
        { heard: verdict.heard },
      );
    }
    if (!verdict.phrase.passed) {
      throw new ProblemError(
        'consent_phrase_not_spoken',
        `The challenge phrase was not heard after the statement. Heard: "${verdict.phrase.heard}"; expected "${challenge.phrase}" (${verdict.phrase.wrong_words} word(s) wrong).`,
        { heard: verdict.heard },
      );
    }
    return {
      challengeId: challenge.id,
      recording: submission.recording,
      evidence: {
        challenge_id: challenge.id,
        statement_version: challenge.statementVersion,
        phrase: challenge.phrase,
        heard: verdict.heard,
        statement_score: verdict.statement.score,
        phrase_wrong_words: verdict.phrase.wrong_words,
        speaker_similarity: Math.round(speaker.similarity * 10_000) / 10_000,
        speaker_threshold: Math.round(speaker.threshold * 10_000) / 10_000,
        recording_sha256: createHash('sha256').update(submission.recording.bytes).digest('hex'),
        checked_at: this.deps.runtime.clock.now().toISOString(),
      },
    };
  }

  /**
   * In the enrollment's transaction, once the voice exists and its biometric consent is attached:
   * spends the challenge (a second enrollment on it is refused) and keeps the consent with the voice.
   */
  async record(tx: Executor, verified: VerifiedConsent, voiceId: string, principal: Principal, now: Date): Promise<void> {
    await this.spend(tx, verified.challengeId, now);
    await this.keepWithVoice(tx, verified, voiceId, actorOf(principal), now);
  }

  /** Spends the challenge in the caller's transaction; a challenge spent meanwhile is refused as unknown ones are. */
  async spend(tx: Executor, challengeId: string, now: Date): Promise<void> {
    if (!(await store.spendChallenge(tx, challengeId, now))) throw challengeProblem();
  }

  /**
   * Keeps the recording with the voice, writes the evidence into its consent record and the check into
   * the audit log, under `actor`: the enrolling owner, or the administrator who transferred a disputed
   * voice to the claimant whose consent it is.
   */
  async keepWithVoice(
    tx: Executor,
    verified: Pick<VerifiedConsent, 'recording' | 'evidence'>,
    voiceId: string,
    actor: AuditActor,
    now: Date,
  ): Promise<void> {
    await store.keepRecording(tx, {
      voiceId,
      audio: Buffer.from(verified.recording.bytes),
      filename: verified.recording.filename,
      sha256: verified.evidence.recording_sha256,
      recordedAt: now,
    });
    await recordSpokenEvidence(tx, voiceId, verified.evidence);
    await queueAuditRecords(tx, [spokenConsentAuditRecord(verified.evidence, voiceId, actor, now, this.deps.runtime.newId())], now);
  }

  /**
   * The owner's download of a voice's consent recording, byte for byte as uploaded. Another owner's
   * voice and a voice without a recording answer alike (404), so voice ids cannot be probed.
   */
  async recordingOf(principal: Principal, voiceId: string): Promise<Buffer> {
    // Another owner's voice answers as a voice without a recording does.
    const voice = await findVoiceOfOwner(this.deps.db, principal.userId, voiceId);
    const audio = voice ? await store.findRecording(this.deps.db, voiceId) : null;
    if (!audio) throw new ProblemError('not_found', 'No voice of yours with this id has a spoken-consent recording.');
    return audio;
  }

  /** Unknown, another owner's, spent and expired challenges answer alike, so challenge ids cannot be probed. */
  private usableChallenge(challenge: ChallengeRow | null, principal: Principal): ChallengeRow {
    const now = this.deps.runtime.clock.now();
    if (!challenge || challenge.ownerId !== principal.userId || challenge.usedAt !== null || challenge.expiresAt <= now) {
      throw challengeProblem();
    }
    return challenge;
  }
}

const syntheticProblem = (why: string) =>
  new ProblemError(
    'consent_recording_synthetic',
    `The spoken_consent recording is refused as synthetic: ${why}. A spoken consent is the owner's own voice, recorded as it is read (the console's recorder, or a plain recording of a microphone).`,
  );

/**
 * Content Credentials (a C2PA manifest store) in the recording: a tool that signs what it made wrote
 * it, as platforms do for synthesized speech. The structural scan finds the store without parsing
 * it (bounded by limits.containerMaxBoxes and limits.containerMaxDepth); only the containers
 * Content Credentials are read from can carry one.
 */
function refuseContentCredentials(bytes: Uint8Array): void {
  const container = sniffContainer(bytes);
  if (container && isCredentialContainer(container) && scanContainer(bytes, container).store) {
    throw syntheticProblem('it carries Content Credentials (a C2PA manifest), which tools write into media they made or edited');
  }
}

/** "print" (word 12, scored below the words that were said), "a" (word 10, too short for its phones) */
const FAULT_WORDS = {
  score: 'scored below the words that were said',
  too_short: 'too short for its phones',
  too_long: 'too long for its phones',
};
const describeWordsNotSaid = (words: WordNotSaid[]) =>
  words.map((word) => `"${word.word}" (word ${word.position}, ${FAULT_WORDS[word.fault]})`).join(', ');

const challengeProblem = () =>
  new ProblemError(
    'consent_challenge_invalid',
    'The challenge_id is not an unused, unexpired challenge of yours: ask for a new one (POST /api/v1/consents/challenges) and record the consent again.',
  );

/**
 * Each word from 32 random bits (little-endian) of the runtime's random source, modulo the word
 * count: the runtime is where tests pin randomness (the bias of 2^32 mod 10 is below 1 in 10^8).
 */
function randomPhrase(runtime: Runtime): string {
  const bytes = runtime.randomBytes(4 * limits.consentPhraseWords);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return Array.from(
    { length: limits.consentPhraseWords },
    (_, index) => PHRASE_WORDS[view.getUint32(4 * index, true) % PHRASE_WORDS.length],
  ).join(' ');
}

function spokenConsentAuditRecord(
  evidence: SpokenConsentEvidence,
  voiceId: string,
  actor: AuditActor,
  now: Date,
  checkId: string,
): AuditRecord {
  return buildAuditRecord('spoken_consent.verified', {
    check_id: checkId,
    decided_at: now,
    voice_id: voiceId,
    reason: `statement_version ${evidence.statement_version}`,
    ...auditCaller(actor),
  });
}
