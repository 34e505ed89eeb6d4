import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';

/**
 * Spoken consent (docs/DECISIONS.md#spoken-consent): whoever enrolls a voice reads, in that voice,
 * the consent statement followed by a fresh random phrase. The statement is fixed per version; its
 * negated forms are part of the grammar the recording is decoded against, so a reading of one of
 * them is heard as what it is rather than forced onto the statement.
 */
export const SPOKEN_CONSENT_LANGUAGES = ['en'] as const;

interface SpokenConsentStatement {
  version: string;
  language: (typeof SPOKEN_CONSENT_LANGUAGES)[number];
  text: string;
  negations: readonly string[];
}

/** spoken-en-3's statement, whose sentences its negations change one at a time. */
const EN_3 = {
  ownVoice: 'This is my own voice.',
  /** What is agreed to, after "I agree" (or "I do not agree"). */
  agreedTo: 'that a voice print of it is stored to protect it and to answer platforms that ask before synthesizing it.',
  withdrawal: 'I may withdraw this consent at any time.',
};

/**
 * Every statement version ever issued, oldest first, so that a consent record's `statement_version`
 * always names the words that were read: evidence of an earlier version stays valid, and a challenge
 * issued before an upgrade is checked against the statement it showed.
 */
export const SPOKEN_CONSENT_STATEMENTS = {
  'spoken-en-1': {
    version: 'spoken-en-1',
    language: 'en',
    text: 'I am the owner of this voice and I agree that it may be enrolled for voice protection.',
    negations: [
      'I am the owner of this voice and I do not agree that it may be enrolled for voice protection.',
      "I am the owner of this voice and I don't agree that it may be enrolled for voice protection.",
      'I am the owner of this voice and I disagree that it may be enrolled for voice protection.',
      'I am not the owner of this voice and I agree that it may be enrolled for voice protection.',
    ],
  },
  /**
   * Words one recorded speaker of the project's test corpus says, so that a passing enrollment could
   * be tested on real speech; it affirms the written consent without stating what is agreed to.
   */
  'spoken-en-2': {
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
  },
  /**
   * States the consent in the first person: whose voice it is, what is kept and why, and that it can
   * be withdrawn (docs/DECISIONS.md#spoken-consent-statement-spoken-en-3). Tested on synthetic voices
   * the corpus lacks (fixtures/spoken-consent/synthetic/).
   */
  'spoken-en-3': {
    version: 'spoken-en-3',
    language: 'en',
    text: `${EN_3.ownVoice} I agree ${EN_3.agreedTo} ${EN_3.withdrawal}`,
    negations: [
      `This is not my own voice. I agree ${EN_3.agreedTo} ${EN_3.withdrawal}`,
      `${EN_3.ownVoice} I do not agree ${EN_3.agreedTo} ${EN_3.withdrawal}`,
      `${EN_3.ownVoice} I don't agree ${EN_3.agreedTo} ${EN_3.withdrawal}`,
      `${EN_3.ownVoice} I disagree ${EN_3.agreedTo} ${EN_3.withdrawal}`,
      `${EN_3.ownVoice} I agree ${EN_3.agreedTo} I may not withdraw this consent.`,
    ],
  },
} as const satisfies Record<string, SpokenConsentStatement>;

export type SpokenConsentVersion = keyof typeof SPOKEN_CONSENT_STATEMENTS;

/** The statement new challenges ask for. */
export const SPOKEN_CONSENT_STATEMENT: SpokenConsentStatement = SPOKEN_CONSENT_STATEMENTS['spoken-en-3'];

/** The statement of `version`, or undefined for a version this service never issued. */
export const spokenConsentStatementOf = (version: string): SpokenConsentStatement | undefined =>
  Object.hasOwn(SPOKEN_CONSENT_STATEMENTS, version) ? SPOKEN_CONSENT_STATEMENTS[version as SpokenConsentVersion] : undefined;

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
  challenge_id: uuid.describe('the challenge the recording answered'),
  statement_version: z.string(),
  phrase: z.string().describe("the challenge's random phrase"),
  heard: z.string().describe('everything the decoder heard: the statement (or a negation) and the phrase'),
  statement_score: z.number().describe('phone-loop score of the reading, nats per 10 ms frame'),
  phrase_wrong_words: z.number().int().describe('words of the phrase not heard as shown'),
  speaker_similarity: z.number().describe('cosine of the consent recording against the enrollment audio'),
  speaker_threshold: z.number().describe('the point the similarity had to reach'),
  recording_sha256: z.string().describe('SHA-256 of the consent recording as uploaded, hex'),
  checked_at: isoTimestamp.describe('when the checks ran'),
});
export type SpokenConsentEvidence = z.infer<typeof spokenConsentEvidenceSchema>;
