import { h } from '@vip/shared-schema/browser/dom';
import { ContractError, ProblemError } from '@vip/shared-schema/client';
import { SessionEnded } from './session.js';

/** Problems an owner meets, in plain words; anything else shows the service's own detail. */
const PLAIN_WORDS: Partial<Record<string, string>> = {
  identity_conflict:
    'This voice is already enrolled by another owner. If it is your voice, someone may have enrolled it without your consent: dispute their enrollment with these recordings and your spoken consent. Nothing of your recording was kept.',
  consent_required: 'The biometric consent is missing or already used by another voice. Give your consent again and retry.',
  // The five checks of a spoken consent, each named (docs/DECISIONS.md#spoken-consent).
  consent_challenge_invalid:
    'Challenge check failed: the phrase you read belongs to a challenge that is used, expired or not yours. A new phrase is shown with the spoken consent: record it again.',
  consent_speaker_mismatch:
    'Voice check failed: the spoken consent was read by another voice than the one in your recordings. Read it yourself, in the voice you are enrolling.',
  consent_statement_not_spoken:
    'Statement check failed: the service did not hear the consent statement as it is written. Read it word for word, then the phrase, in one recording.',
  consent_phrase_not_spoken:
    'Phrase check failed: the service did not hear the phrase after the statement. Read its words one by one, after the statement, in the same recording.',
  consent_recording_synthetic:
    'Recording check failed: the spoken consent carries the marks of synthesized or signed media (a watermark or Content Credentials). Record it yourself, with your microphone.',
  no_speech: 'No speech was found in the recordings. Record again close to the microphone, reading the prompts aloud.',
  too_short: 'There is not enough speech yet: together the recordings need at least 10 seconds of speech. Add another take.',
  empty_audio: 'A recording is empty. Remove it and record again.',
  corrupt_audio: 'A file could not be read as audio. Remove it or export it again.',
  unsupported_format: 'A file is in a format the service does not read (WAV, FLAC, MP3, Ogg, WebM or MP4 audio work).',
  too_long: 'A recording is longer than 5 minutes. Split it or trim it.',
  payload_too_large: 'A file is larger than 20 MB.',
  email_taken: 'An account with this email exists already. Sign in instead.',
  invalid_credentials: 'The email or the password is wrong.',
  rate_limited: 'Too many attempts. Wait a moment and try again.',
  unavailable: 'The service is busy. Try again in a moment.',
};

/** An error in one line, for a notice inside a list (a take the service could not measure). */
export const problemText = (error: unknown): string => (error instanceof ProblemError ? error.detail : (error as Error).message);

/**
 * An error notice for anything a call threw: role="alert", so a screen reader reads it at once.
 * A problem about one file of an upload names it by its filename already.
 */
export function errorNotice(error: unknown): HTMLElement {
  if (error instanceof ProblemError) {
    const fields = error.errors.map((field) => h('li', {}, `${field.field}: ${field.message}`));
    const { detail } = error;
    const plain = PLAIN_WORDS[error.code];
    // A spoken consent's words problem says what the speech decoder heard: shown as heard, in place of the detail that quotes it.
    const { heard } = error.problem;
    return h(
      'div',
      { class: 'notice error', role: 'alert', 'data-code': error.code },
      h('p', {}, h('strong', {}, `${error.title}. `), plain ?? detail),
      heard !== undefined
        ? h('p', { class: 'heard' }, 'The service heard: ', heard ? h('q', {}, heard) : 'nothing it could read as the statement.')
        : plain
          ? h('p', {}, `The service said: ${detail}`)
          : null,
      fields.length ? h('ul', {}, ...fields) : null,
      h('p', { class: 'hint' }, `Code ${error.code}, request id ${error.requestId}`),
    );
  }
  if (error instanceof SessionEnded) return h('div', { class: 'notice error', role: 'alert' }, error.message);
  const what = error instanceof ContractError ? 'The service answered in an unexpected shape' : 'The request failed';
  return h('div', { class: 'notice error', role: 'alert' }, `${what}: ${(error as Error).message}`);
}

export const successNotice = (...children: (Node | string)[]): HTMLElement =>
  h('div', { class: 'notice success', role: 'status' }, ...children);

/** A date and time in the reader's locale, with the exact value as a machine-readable attribute. */
export const time = (iso: string): HTMLElement => h('time', { datetime: iso }, new Date(iso).toLocaleString());

/**
 * The same to the millisecond, for a timeline: decisions a moment apart (an approval and the
 * redemption of its token) read in their order.
 */
export const preciseTime = (iso: string): HTMLElement =>
  h(
    'time',
    { datetime: iso },
    new Date(iso).toLocaleString(undefined, {
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: '2-digit',
      second: '2-digit',
      fractionalSecondDigits: 3,
    }),
  );
