import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';

/**
 * Spoken consent (docs/DECISIONS.md#spoken-consent): whoever enrolls a voice reads, in that voice,
 * the consent statement followed by a fresh random phrase. The statement is fixed per version; its
 * negated forms are part of the grammar the recording is decoded against, so a reading of one of
 * them is heard as what it is rather than forced onto the statement.
 */
export const SPOKEN_CONSENT_LANGUAGES = ['en'] as const;

export const SPOKEN_CONSENT_STATEMENT = {
  /**
   * spoken-en-2 replaced spoken-en-1 ("I am the owner of this voice and I agree that it may be
   * enrolled for voice protection."): read after the written biometric consent, it affirms it in the
   * voice being enrolled, in words a real recorded speaker of the project's test corpus says, so that
   * a passing enrollment is tested on real speech (docs/DECISIONS.md#spoken-consent).
   */
  version: 'spoken-en-2',
  language: 'en',
  text: 'It is me here and you can use it now.',
  negations: [
    'It is me here and you can not use it now.',
    'It is me here and you cannot use it now.',
    "It is me here and you can't use it now.",
    'It is me here and you do not use it now.',
    'It is not me here and you can use it now.',
  ],
} as const satisfies { version: string; language: (typeof SPOKEN_CONSENT_LANGUAGES)[number]; text: string; negations: readonly string[] };

export const consentChallengeSchema = z
  .object({
    challenge_id: uuid,
    statement: z.string().describe('the consent statement to read aloud first'),
    statement_version: z.string(),
    phrase: z.string().describe('the random phrase to read aloud after the statement'),
    language: z.enum(SPOKEN_CONSENT_LANGUAGES),
    expires_at: isoTimestamp.describe('the challenge serves one enrollment until then'),
  })
  .meta({ id: 'ConsentChallenge' });

/** What the spoken-consent checks found, kept in the voice's biometric consent record. */
export const spokenConsentEvidenceSchema = z.object({
  challenge_id: uuid,
  statement_version: z.string(),
  phrase: z.string(),
  heard: z.string().describe('everything the decoder heard: the statement (or a negation) and the phrase'),
  statement_score: z.number().describe('phone-loop score of the reading, nats per 10 ms frame'),
  phrase_wrong_words: z.number().int(),
  speaker_similarity: z.number().describe('cosine of the consent recording against the enrollment audio'),
  speaker_threshold: z.number(),
  recording_sha256: z.string(),
  checked_at: isoTimestamp,
});
export type SpokenConsentEvidence = z.infer<typeof spokenConsentEvidenceSchema>;
