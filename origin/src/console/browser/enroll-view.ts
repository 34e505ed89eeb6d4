import { h, replace } from '../../../../shared-schema/src/browser/dom.js';
import { limits } from '../../../../shared-schema/src/limits.js';
import { BIOMETRIC_CONSENT_STATEMENT } from '../../../../shared-schema/src/pages.js';
import { qualityWarnings } from '../../../../shared-schema/src/voices.js';
import { handleSubmit } from './fields.js';
import { errorNotice, successNotice, time } from './messages.js';
import { Recorder, type Take } from './recorder.js';
import { api } from './session.js';
import { STATUS_WORDS } from './voice-view.js';

/** Sentences to read aloud: varied sounds, about 3 s each. */
const PROMPTS = [
  'The quick brown fox jumps over the lazy dog near the riverbank.',
  'Please call Stella and ask her to bring these things with her from the store.',
  'Six spoons of fresh snow peas, five thick slabs of blue cheese, and maybe a snack for her brother Bob.',
  'We also need a small plastic snake and a big toy frog for the kids.',
  'She can scoop these things into three red bags, and we will go meet her Wednesday at the train station.',
  'When the sunlight strikes raindrops in the air, they act as a prism and form a rainbow.',
];

const WARNING_WORDS: Record<string, string> = {
  clipping: 'too loud: parts are distorted; move back from the microphone or lower its gain',
  noisy: 'noisy: the background competes with your voice; record somewhere quieter',
};

/** Kept while the tab is open, so a failed attempt can be retried without consenting again. */
interface Consent {
  consentId: string;
  grantedAt: string;
}
let consent: Consent | null = null;

const seconds = (value: number) => `${value.toFixed(1)} s`;

function consentSection(onChange: () => void): HTMLElement {
  if (consent) {
    return h(
      'section',
      { class: 'card', 'aria-labelledby': 'consent-title' },
      h('h2', { id: 'consent-title' }, '1. Biometric consent'),
      successNotice(`Consent given (statement version ${BIOMETRIC_CONSENT_STATEMENT.version}) at `, time(consent.grantedAt), '.'),
    );
  }
  const status = h('div', { 'aria-live': 'polite' });
  const checkbox = h('input', { type: 'checkbox', id: 'consent-accept', required: true });
  const form = h(
    'form',
    { 'aria-labelledby': 'consent-title', novalidate: true },
    h('p', {}, h('strong', {}, `Consent statement, version ${BIOMETRIC_CONSENT_STATEMENT.version}`)),
    h('div', { class: 'statement', id: 'consent-statement' }, ...BIOMETRIC_CONSENT_STATEMENT.paragraphs.map((text) => h('p', {}, text))),
    h(
      'div',
      { class: 'row' },
      checkbox,
      h('label', { for: 'consent-accept', class: 'inline' }, 'I have read this statement and I consent.'),
    ),
    h('p', {}, h('button', { type: 'submit' }, 'Give consent')),
    status,
  );
  handleSubmit(form, status, async () => {
    if (!checkbox.checked) {
      checkbox.focus();
      return h('div', { class: 'notice error', role: 'alert' }, 'Tick the box to accept the statement, or leave this page.');
    }
    const granted = await api.consents.grantBiometric({
      type: 'biometric',
      statement_version: BIOMETRIC_CONSENT_STATEMENT.version,
      accepted: true,
    });
    consent = { consentId: granted.consent_id, grantedAt: granted.granted_at };
    onChange();
    return undefined;
  });
  return h('section', { class: 'card' }, h('h2', { id: 'consent-title' }, '1. Biometric consent'), form);
}

export async function renderEnroll(root: HTMLElement): Promise<void> {
  const consentSlot = h('div');
  const drawConsent = () => replace(consentSlot, consentSection(drawConsent));
  const takes: Take[] = [];
  let uploads: File[] = [];

  const takeList = h('ul', { class: 'takes', 'aria-label': 'Recorded takes' });
  const total = h('p', { id: 'speech-total', 'aria-live': 'polite' });
  const meter = h('meter', { id: 'level', min: 0, max: 1, value: 0, 'aria-label': 'Microphone level' });
  const live = h('p', { id: 'take-progress' }, 'Not recording.');
  const recordButton = h('button', { type: 'button', id: 'record' }, 'Start recording');
  const result = h('div', { id: 'enroll-result' });
  const recorder = new Recorder(({ level, seconds: elapsed, speechSeconds }) => {
    meter.value = level;
    live.textContent = `Recording: ${seconds(elapsed)}, about ${seconds(speechSeconds)} of speech in this take.`;
  });

  const updateTotal = () => {
    const speech = takes.reduce((sum, take) => sum + take.speechSeconds, 0);
    const enough = speech >= limits.enrollMinSpeechSeconds;
    total.textContent =
      `About ${seconds(speech)} of speech recorded of the ${limits.enrollMinSpeechSeconds} s needed` +
      (uploads.length ? `, plus ${uploads.length} uploaded file(s) (measured at enrollment).` : '.') +
      (enough || uploads.length ? '' : ' Keep reading.');
  };
  const drawTakes = () => {
    replace(
      takeList,
      ...takes.map((take, index) =>
        h(
          'li',
          {},
          h('span', {}, `${take.file.name}: ${seconds(take.seconds)}, about ${seconds(take.speechSeconds)} of speech `),
          h('audio', { controls: true, src: URL.createObjectURL(take.file), 'aria-label': `Play ${take.file.name}` }),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => {
                takes.splice(index, 1);
                drawTakes();
              },
            },
            `Remove ${take.file.name}`,
          ),
        ),
      ),
    );
    updateTotal();
  };

  recordButton.addEventListener('click', async () => {
    try {
      if (!recorder.recording) {
        await recorder.start();
        recordButton.textContent = 'Stop recording';
        recordButton.setAttribute('aria-pressed', 'true');
        return;
      }
      const take = await recorder.stop(`take-${takes.length + 1}`);
      recordButton.textContent = 'Start recording';
      recordButton.setAttribute('aria-pressed', 'false');
      meter.value = 0;
      live.textContent = `Recorded ${take.file.name}.`;
      takes.push(take);
      drawTakes();
    } catch (error) {
      live.textContent = `The microphone could not be used: ${(error as Error).message}. You can upload recordings instead.`;
    }
  });

  const fileInput = h('input', { type: 'file', id: 'upload', accept: 'audio/*,.wav,.flac,.mp3,.ogg,.opus,.webm,.m4a', multiple: true });
  fileInput.addEventListener('change', () => {
    uploads = [...(fileInput.files ?? [])];
    updateTotal();
  });

  const nameInput = h('input', { id: 'voice-name', name: 'name', required: true, maxlength: 100, autocomplete: 'off' });
  const enrollButton = h('button', { type: 'button', id: 'enroll' }, 'Enroll this voice');
  enrollButton.addEventListener('click', async () => {
    const files = [...takes.map((take) => take.file), ...uploads];
    if (!consent) return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Give your biometric consent first (step 1).'));
    if (!nameInput.value.trim()) {
      nameInput.focus();
      return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Give the voice a name (step 2).'));
    }
    if (files.length === 0)
      return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Record a take or choose a file (step 3).'));
    enrollButton.disabled = true;
    replace(result, h('p', { role: 'status' }, 'Enrolling: the service is measuring your recordings…'));
    try {
      const voice = await api.voices.enroll({ name: nameInput.value.trim(), consent_id: consent.consentId, audio: files });
      consent = null;
      const perFile = voice.quality.files.map((quality) => {
        const warnings = qualityWarnings(quality);
        return h(
          'tr',
          {},
          h('td', { 'data-label': 'File' }, quality.filename),
          h('td', { 'data-label': 'Speech' }, seconds(quality.speech_seconds)),
          h('td', { 'data-label': 'Quality' }, warnings.length ? warnings.map((warning) => WARNING_WORDS[warning]).join('; ') : 'good'),
        );
      });
      replace(
        result,
        successNotice(
          `Enrolled "${voice.name}" from ${seconds(voice.speech_seconds)} of speech. Status: ${STATUS_WORDS[voice.status] ?? voice.status}`,
        ),
        h(
          'table',
          { class: 'stack', id: 'quality' },
          h('caption', {}, 'Recording quality, file by file'),
          h(
            'thead',
            {},
            h('tr', {}, h('th', { scope: 'col' }, 'File'), h('th', { scope: 'col' }, 'Speech'), h('th', { scope: 'col' }, 'Quality')),
          ),
          h('tbody', {}, ...perFile),
        ),
        h('p', {}, h('a', { href: `#/voices/${voice.voice_id}`, id: 'open-voice' }, `Open ${voice.name}: consent and licences`)),
      );
      result.querySelector('a')?.focus();
    } catch (error) {
      replace(result, errorNotice(error));
    } finally {
      enrollButton.disabled = false;
    }
  });

  replace(
    root,
    h('h1', {}, 'Enroll a voice'),
    h('p', {}, `Four steps: consent, a name, ${limits.enrollMinSpeechSeconds} seconds or more of your speech, and enrollment.`),
    consentSlot,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'name-title' },
      h('h2', { id: 'name-title' }, '2. Name'),
      h('label', { for: 'voice-name' }, 'Voice name'),
      h('p', { class: 'hint' }, 'Shown on the public licensing page of the voice.'),
      nameInput,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'record-title' },
      h('h2', { id: 'record-title' }, '3. Record, or upload'),
      h(
        'p',
        {},
        'Read these sentences aloud in your normal voice, in a quiet room. Stop when the total reaches the minimum; one or several takes.',
      ),
      h('ol', { class: 'prompts' }, ...PROMPTS.map((text) => h('li', {}, text))),
      h('div', { class: 'row' }, recordButton, h('label', { for: 'level', class: 'inline' }, 'Level'), meter),
      live,
      takeList,
      h('label', { for: 'upload' }, 'Or upload recordings'),
      h('p', { class: 'hint' }, 'WAV, FLAC, MP3, Ogg, WebM or M4A; up to 20 MB and 5 minutes each.'),
      fileInput,
      total,
    ),
    h('section', { class: 'card', 'aria-labelledby': 'enroll-title' }, h('h2', { id: 'enroll-title' }, '4. Enroll'), enrollButton, result),
  );
  drawConsent();
  updateTotal();
}
