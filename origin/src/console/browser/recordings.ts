import { h, replace } from '@vip/shared-schema/browser/dom';
import { limits } from '@vip/shared-schema/limits';
import { qualityWarnings } from '@vip/shared-schema/voices';
import { problemText } from './messages.js';
import { Recorder, type Take } from './recorder.js';
import { api } from './session.js';

/**
 * What enrollment and re-enrollment share: the recordings an owner gives (takes from the microphone
 * and uploaded files) and the per-file quality report both answers carry.
 */

type Quality = Awaited<ReturnType<typeof api.voices.enroll>>['quality'];

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

export const seconds = (value: number) => `${value.toFixed(1)} s`;

export interface RecordingsPanel {
  /** The prompts, the recorder with its level meter and takes, and the upload field. */
  element: HTMLElement;
  /** The takes, then the uploaded files, as they are now. */
  files: () => File[];
  /** After the recordings were enrolled: they are cleared, and the total says what the service counted. */
  enrolled: (speechSeconds: number) => void;
}

/** The service's measurement of one recording (POST /api/v1/voices/measure), as it stands. */
type Measurement = { state: 'measuring' } | { state: 'measured'; speechSeconds: number } | { state: 'failed'; message: string };

/** One panel per view: its elements carry fixed ids (`record`, `level`, `take-progress`, `upload`, `speech-total`). */
export function recordingsPanel(): RecordingsPanel {
  const takes: Take[] = [];
  let uploads: File[] = [];
  const measurements = new Map<File, Measurement>();

  const takeList = h('ul', { class: 'takes', 'aria-label': 'Recorded takes' });
  const total = h('p', { id: 'speech-total', 'aria-live': 'polite' });
  const meter = h('meter', { id: 'level', min: 0, max: 1, value: 0, 'aria-label': 'Microphone level' });
  const live = h('p', { id: 'take-progress' }, 'Not recording.');
  const recordButton = h('button', { type: 'button', id: 'record' }, 'Start recording');
  const recorder = new Recorder(({ level, seconds: elapsed }) => {
    meter.value = level;
    live.textContent = `Recording: ${seconds(elapsed)}. The service measures the speech in this take when you stop.`;
  });

  const speechOf = (file: File) => {
    const measurement = measurements.get(file);
    if (measurement?.state === 'measured') return `${seconds(measurement.speechSeconds)} of speech`;
    if (measurement?.state === 'failed') return `speech not measured: ${measurement.message}`;
    return 'measuring its speech…';
  };
  const updateTotal = () => {
    const files = [...takes.map((take) => take.file), ...uploads];
    const states = files.map((file) => measurements.get(file) ?? ({ state: 'measuring' } as const));
    const speech = states.reduce((sum, measurement) => sum + (measurement.state === 'measured' ? measurement.speechSeconds : 0), 0);
    const measuring = states.some((measurement) => measurement.state === 'measuring');
    total.dataset.speechSeconds = speech.toFixed(1);
    total.dataset.measuring = String(measuring);
    if (files.length === 0) {
      total.textContent = `No recording yet: ${limits.enrollMinSpeechSeconds} s of speech are needed.`;
      return;
    }
    const enough = speech >= limits.enrollMinSpeechSeconds;
    total.textContent =
      `${seconds(speech)} of speech, as the service measured it, of the ${limits.enrollMinSpeechSeconds} s needed` +
      (uploads.length ? ` (${takes.length} take(s), ${uploads.length} uploaded file(s))` : '') +
      (measuring ? '; measuring the latest recording…' : enough ? ': enough to enroll.' : '. Keep reading.');
  };
  /** Asks the service how much speech `file` holds, with the detector enrollment uses. */
  const measure = (file: File) => {
    measurements.set(file, { state: 'measuring' });
    api.voices
      .measure([file])
      .then((answer) => measurements.set(file, { state: 'measured', speechSeconds: answer.speech_seconds }))
      .catch((error: unknown) => measurements.set(file, { state: 'failed', message: problemText(error) }))
      .finally(() => {
        drawTakes();
      });
  };
  const drawTakes = () => {
    replace(
      takeList,
      ...takes.map((take, index) =>
        h(
          'li',
          {},
          h('span', {}, `${take.file.name}: ${seconds(take.seconds)}, ${speechOf(take.file)} `),
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
      measure(take.file);
      drawTakes();
    } catch (error) {
      live.textContent = `The microphone could not be used: ${(error as Error).message}. You can upload recordings instead.`;
    }
  });

  const fileInput = h('input', { type: 'file', id: 'upload', accept: 'audio/*,.wav,.flac,.mp3,.ogg,.opus,.webm,.m4a', multiple: true });
  fileInput.addEventListener('change', () => {
    uploads = [...(fileInput.files ?? [])];
    for (const file of uploads) if (!measurements.has(file)) measure(file);
    updateTotal();
  });

  updateTotal();
  return {
    element: h(
      'div',
      {},
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
    files: () => [...takes.map((take) => take.file), ...uploads],
    enrolled: (speechSeconds) => {
      takes.splice(0);
      uploads = [];
      fileInput.value = '';
      measurements.clear();
      replace(takeList);
      live.textContent = 'Not recording.';
      total.textContent = `Enrolled from ${seconds(speechSeconds)} of speech, as the service measured it.`;
    },
  };
}

/** The quality of each file sent, by its name, as enrollment and re-enrollment answer it. */
export function qualityTable(quality: Quality): HTMLElement {
  const perFile = quality.files.map((file) => {
    const warnings = qualityWarnings(file);
    return h(
      'tr',
      {},
      h('td', { 'data-label': 'File' }, file.filename),
      h('td', { 'data-label': 'Speech' }, seconds(file.speech_seconds)),
      h('td', { 'data-label': 'Quality' }, warnings.length ? warnings.map((warning) => WARNING_WORDS[warning]).join('; ') : 'good'),
    );
  });
  return h(
    'table',
    { class: 'stack', id: 'quality' },
    h('caption', {}, 'Recording quality, file by file'),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col' }, 'File'), h('th', { scope: 'col' }, 'Speech'), h('th', { scope: 'col' }, 'Quality')),
    ),
    h('tbody', {}, ...perFile),
  );
}
