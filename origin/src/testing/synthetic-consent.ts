import { readFileSync } from 'node:fs';
import path from 'node:path';
import { BIOMETRIC_CONSENT_STATEMENT, limits, SPOKEN_CONSENT_STATEMENTS } from '@vip/shared-schema';
import type { OriginClient } from '@vip/shared-schema/client';
import { PHRASE_WORDS } from '../spoken-consent/consent-words.js';
import { decodeAudio } from '../voiceprint/decode.js';
import { fixturesDir, pcm16Wav } from './fixtures.js';
import { joined } from './recorded-consent.js';

/**
 * Spoken consents by voices no corpus speaker has: Debian's flite (four speakers) and festival (an
 * HTS voice of the Arctic speaker flite's slt was built from) read the current statement, a negation
 * of it, another text, each digit alone and a few sentences for the voice's own enrollment, committed
 * under fixtures/spoken-consent/synthetic/ by scripts/make-synthetic-consent-fixtures.ts (16 kHz mono
 * Ogg Opus, silence trimmed). A consent recording for any phrase the origin draws is assembled from
 * the digit recordings; nothing beside the clone is needed.
 */
export const SYNTHETIC_VOICES = {
  'flite-slt': { synthesizer: 'flite', voice: 'slt' },
  'flite-rms': { synthesizer: 'flite', voice: 'rms' },
  'flite-awb': { synthesizer: 'flite', voice: 'awb' },
  'flite-kal16': { synthesizer: 'flite', voice: 'kal16' },
  'festival-slt-hts': { synthesizer: 'festival', voice: 'cmu_us_slt_arctic_hts' },
} as const;

export type SyntheticVoice = keyof typeof SYNTHETIC_VOICES;

/** The statement version the fixtures read: a new version means rerunning the script. */
export const SYNTHETIC_STATEMENT = SPOKEN_CONSENT_STATEMENTS['spoken-en-3'];

export const SYNTHETIC_CONSENT_TEXTS = {
  statement: SYNTHETIC_STATEMENT.text,
  /** The statement with "do not" where a reader refusing would put it. */
  negated: SYNTHETIC_STATEMENT.negations[1],
  /** Another text in the same voice: no statement at all. */
  other: 'The weather was fine, so we walked along the river until the sun went down.',
  /**
   * The statement with one word the reader did not say in its place ("clone" for "protect"): the
   * decoder, given the statement, forces "protect" onto it; the word checks must refuse it.
   */
  swapped: SYNTHETIC_STATEMENT.text.replace('to protect it', 'to clone it'),
} as const;

export type SyntheticReading = keyof typeof SYNTHETIC_CONSENT_TEXTS;

/** The voice's enrollment: Harvard sentences, about 15 s of speech, none of them a consent word. */
export const SYNTHETIC_ENROLLMENT_TEXTS = [
  'The birch canoe slid on the smooth planks.',
  'Glue the sheet to the dark blue background.',
  'The box was thrown beside the parked truck.',
  'Rice is often served in round bowls.',
  'The juice of lemons makes fine punch.',
  'A large size in stockings is hard to sell.',
  'The stale smell of old beer lingers.',
] as const;

export const syntheticConsentDir = (voice: SyntheticVoice) => path.join(fixturesDir, 'spoken-consent', 'synthetic', voice);

const SAMPLE_RATE = 16000;
/** A reader's pause between the statement and the phrase, and between the digits of the phrase. */
const PAUSE_SECONDS = 0.4;
const DIGIT_GAP_SECONDS = 0.2;

const fileOf = (voice: SyntheticVoice, name: string) => new Uint8Array(readFileSync(path.join(syntheticConsentDir(voice), `${name}.opus`)));

/** The voice's enrollment recordings, as files to upload. */
export const syntheticEnrollment = (voice: SyntheticVoice): Uint8Array[] =>
  SYNTHETIC_ENROLLMENT_TEXTS.map((_, index) => fileOf(voice, `enroll-${index + 1}`));

async function samplesOf(voice: SyntheticVoice, name: string): Promise<Float32Array> {
  return (await decodeAudio(fileOf(voice, name), { maxBytes: limits.audioMaxBytes, maxSeconds: 60, minSeconds: 0 })).samples;
}

/** The voice's enrollment recordings decoded, for a test that joins or re-encodes them (16 kHz). */
export const syntheticEnrollmentSamples = (voice: SyntheticVoice): Promise<Float32Array[]> =>
  Promise.all(SYNTHETIC_ENROLLMENT_TEXTS.map((_, index) => samplesOf(voice, `enroll-${index + 1}`)));

/**
 * The samples of a consent recording for `phrase` (a challenge phrase of digits) in `voice`: the
 * `reading` (the statement, its negation or another text), a pause, then the phrase's digits, each
 * its own recording.
 */
export async function syntheticConsentSamples(
  voice: SyntheticVoice,
  phrase: string,
  reading: SyntheticReading = 'statement',
): Promise<Float32Array> {
  const words = phrase.split(' ');
  const unknown = words.filter((word) => !(PHRASE_WORDS as readonly string[]).includes(word));
  if (unknown.length > 0) throw new Error(`no recording of ${unknown.join(', ')}: a phrase is made of ${PHRASE_WORDS.join(' ')}`);
  const digits = await Promise.all(words.map((word) => samplesOf(voice, word)));
  const gap = new Float32Array(Math.round(DIGIT_GAP_SECONDS * SAMPLE_RATE));
  return joined([
    await samplesOf(voice, reading),
    new Float32Array(Math.round(PAUSE_SECONDS * SAMPLE_RATE)),
    ...digits.flatMap((digit) => [digit, gap]),
  ]);
}

/** The same, as the 16 kHz PCM16 WAV file an owner would upload. */
export const syntheticConsent = async (voice: SyntheticVoice, phrase: string, reading: SyntheticReading = 'statement') =>
  pcm16Wav(await syntheticConsentSamples(voice, phrase, reading));

/**
 * `voice` enrolled as `name` by the owner `asOwner` speaks for, as the service requires of every
 * enrollment: a biometric consent, and the spoken consent of a fresh challenge (each digit is
 * recorded alone, so whatever phrase the origin draws can be read). Answers the enrollment.
 */
export async function enrollSyntheticVoice(asOwner: OriginClient, voice: SyntheticVoice, name: string) {
  const consent = await asOwner.biometricConsent.grant({
    type: 'biometric',
    statement_version: BIOMETRIC_CONSENT_STATEMENT.version,
    accepted: true,
  });
  const audio = syntheticEnrollment(voice).map((data, index) => ({ data, filename: `enroll-${index + 1}.opus` }));
  const challenge = await asOwner.spokenConsent.challenge();
  const spoken_consent = {
    challenge_id: challenge.challenge_id,
    recording: { data: await syntheticConsent(voice, challenge.phrase), filename: 'spoken-consent.wav', type: 'audio/wav' },
  };
  return asOwner.voices.enroll({ name, consent_id: consent.consent_id, audio, spoken_consent });
}
