import { readFileSync } from 'node:fs';
import path from 'node:path';
import { consentChallengeSchema, pathOf, SPOKEN_CONSENT_STATEMENTS } from '@vip/shared-schema';
import { createSpokenConsentChallengeRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import { eq } from 'drizzle-orm';
import { consentChallenges } from '../db/schema.js';
import { PHRASE_WORDS } from '../spoken-consent/consent-words.js';
import { fixturesDir, pcm16Wav, speechDir } from './fixtures.js';
import { bearer, type loggedIn, type TestOrigin } from './origin.js';

/**
 * A real person's spoken consent, committed under fixtures/spoken-consent/ by
 * scripts/make-consent-fixtures.ts: speechocean762 speaker so762:SPEAKER2007 (dev half) saying the
 * statement of spoken-en-2 (whose words were chosen because this speaker says them), the statement
 * with "not" inserted, and the digits zero, two, five, six, eight and nine, each word cut from their
 * own read sentences. New challenges ask for a later statement, so the tests read it as the answer to
 * a challenge issued before the upgrade: the accented, real-speech case beside the synthetic voices
 * of synthetic-consent.ts. The same speaker's enrollment clips are committed in
 * fixtures/speech/so762/. The spoken-consent tests and the demo seed (launch/demo-seed.ts) read it;
 * nothing beside the clone is needed.
 */
export const RECORDED_CONSENT = {
  speaker: 'so762:SPEAKER2007',
  statementVersion: 'spoken-en-2',
  /** Recordings of the speaker committed for enrollment (17 s), none of them a source of the consent's words. */
  enrollmentClips: ['020070091', '020070065', '020070095', '020070079', '020070081'],
  statement: 'statement.wav',
  negatedStatement: 'statement-not.wav',
  /** The statement with "not" where a reader refusing would put it. */
  negatedText: SPOKEN_CONSENT_STATEMENTS['spoken-en-2'].negations[0],
  /** The digits the speaker read ("six eight zero two", "nine five six zero"): a phrase made of them can be said. */
  digits: ['zero', 'two', 'five', 'six', 'eight', 'nine'],
} as const;

export const recordedConsentDir = path.join(fixturesDir, 'spoken-consent', 'SPEAKER2007');

const SAMPLE_RATE = 16000;

/** The speaker's enrollment clips, as files to upload. */
export const recordedConsentEnrollment = (): Uint8Array[] =>
  RECORDED_CONSENT.enrollmentClips.map(
    (clip) => new Uint8Array(readFileSync(path.join(speechDir, 'so762', 'SPEAKER2007', `${clip}.opus`))),
  );

/** Whether the speaker said every word of `phrase` (a challenge phrase of digits). */
export const canSay = (phrase: string): boolean =>
  phrase.split(' ').every((word) => (RECORDED_CONSENT.digits as readonly string[]).includes(word));

/**
 * The consent recording of a challenge: the statement (or, `negated`, its "do not" form), a pause, then
 * the phrase's digits, as a 16 kHz PCM16 WAV file.
 */
export function recordedConsent(phrase: string, { negated = false } = {}): Uint8Array {
  if (!canSay(phrase)) throw new Error(`${RECORDED_CONSENT.speaker} did not record every word of "${phrase}"`);
  const statement = samplesOf(negated ? RECORDED_CONSENT.negatedStatement : RECORDED_CONSENT.statement);
  const pause = new Float32Array(Math.round(0.4 * SAMPLE_RATE));
  const digits = phrase.split(' ').flatMap((digit) => [samplesOf(`${digit}.wav`), new Float32Array(Math.round(0.08 * SAMPLE_RATE))]);
  return pcm16Wav(joined([statement, pause, ...digits]));
}

/** The samples of a fixture written by pcm16Wav (a 44-byte header, then PCM16). */
function samplesOf(name: string): Float32Array {
  const bytes = readFileSync(path.join(recordedConsentDir, name));
  return Float32Array.from(
    new Int16Array(bytes.buffer.slice(bytes.byteOffset + 44, bytes.byteOffset + bytes.length)),
    (value) => value / 32768,
  );
}

/** Audio pieces one after another. */
export function joined(parts: Float32Array[]): Float32Array {
  const out = new Float32Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Random bytes from which the challenge service draws `phrase` (each word is 32 little-endian bits
 * modulo the phrase-word count): for a test runtime's randomBytes, so a challenge asks for words the
 * recorded speaker said.
 */
export function randomBytesFor(phrase: string): Uint8Array {
  const words = phrase.split(' ');
  const bytes = new Uint8Array(4 * words.length);
  const view = new DataView(bytes.buffer);
  for (const [index, word] of words.entries()) view.setUint32(4 * index, (PHRASE_WORDS as readonly string[]).indexOf(word), true);
  return bytes;
}

/** Digits the recorded speaker said: a phrase a challenge can ask of them. */
export const SAYABLE_PHRASE = 'nine two six zero eight five';

/**
 * A challenge for the recorded speaker: its phrase is `phrase` (the origin's random source, the
 * runtime, yields it, once), and its statement the one the speaker read, as if the challenge had been
 * issued before the statement's upgrade and answered within its lifetime.
 */
export async function challengeFor(origin: TestOrigin, owner: Awaited<ReturnType<typeof loggedIn>>, phrase = SAYABLE_PHRASE) {
  const random = origin.runtime.randomBytes;
  origin.runtime.randomBytes = () => randomBytesFor(phrase);
  try {
    const answer = await origin.app.inject({
      method: 'POST',
      url: pathOf(createSpokenConsentChallengeRoute),
      headers: bearer(owner.accessToken),
    });
    const issued = consentChallengeSchema.parse(answer.json());
    await origin.database.db
      .update(consentChallenges)
      .set({ statementVersion: RECORDED_CONSENT.statementVersion })
      .where(eq(consentChallenges.id, issued.challenge_id));
    return issued;
  } finally {
    origin.runtime.randomBytes = random;
  }
}
