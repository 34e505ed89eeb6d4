import { h, replace } from '@vip/shared-schema/browser/dom';
import { ProblemError, type SpokenConsentInput } from '@vip/shared-schema/client';
import { limits } from '@vip/shared-schema/limits';
import { errorNotice, time } from './messages.js';
import { Recorder } from './recorder.js';
import { seconds } from './recordings.js';
import { api } from './session.js';

/**
 * The spoken consent of an enrollment or a re-recording (docs/DECISIONS.md#spoken-consent): the
 * statement and the random phrase of a fresh challenge, read aloud into one take of the recorder the
 * enrollment takes use (or an uploaded file), sent with the challenge's id. A challenge serves one
 * enrollment: a new one replaces it when the owner asks, when it expires, and when the service says
 * it can no longer be used; the take of the old phrase goes with it.
 */

type Challenge = Awaited<ReturnType<typeof api.spokenConsent.challenge>>;

export interface SpokenConsentPanel {
  element: HTMLElement;
  /** The recording with its challenge; null until the owner recorded or chose one. */
  submission: () => SpokenConsentInput | null;
  /** The enrollment it was sent with succeeded: its challenge is spent, the next enrollment gets a new one. */
  used: () => void;
  /** The enrollment was refused: a challenge the service no longer takes is replaced at once. */
  refused: (error: unknown) => void;
}

/** One panel per view: its elements carry fixed ids (`spoken-statement`, `spoken-phrase`, `record-consent`, ...). */
export function spokenConsentPanel(): SpokenConsentPanel {
  let challenge: Challenge | null = null;
  let take: File | null = null;
  let expiry: ReturnType<typeof setTimeout> | undefined;

  const challengeArea = h('div', { id: 'spoken-challenge', 'aria-busy': 'true' }, h('p', {}, 'Asking the service for a phrase…'));
  const status = h('div', { id: 'challenge-status', 'aria-live': 'polite' });
  const meter = h('meter', { id: 'consent-level', min: 0, max: 1, value: 0, 'aria-label': 'Microphone level of the spoken consent' });
  const live = h('p', { id: 'consent-progress' }, 'Not recording.');
  const takeArea = h('div', { id: 'consent-take' });
  const recordButton = h('button', { type: 'button', id: 'record-consent' }, 'Record the spoken consent');
  const fileInput = h('input', { type: 'file', id: 'consent-upload', accept: 'audio/*,.wav,.flac,.mp3,.ogg,.opus,.webm,.m4a' });
  let stopping = false;
  const recorder = new Recorder(({ level, seconds: elapsed }) => {
    meter.value = level;
    live.textContent = `Recording the spoken consent: ${seconds(elapsed)} of at most ${limits.spokenConsentMaxSeconds} s.`;
    // The service refuses a longer consent recording: the take ends at the limit by itself.
    if (elapsed >= limits.spokenConsentMaxSeconds && !stopping) void stopRecording();
  });

  const drawTake = () => {
    if (!take) return replace(takeArea);
    replace(
      takeArea,
      h('p', {}, `${take.name} will be sent with this enrollment, for the phrase shown above.`),
      h('audio', { controls: true, src: URL.createObjectURL(take), 'aria-label': `Play ${take.name}` }),
    );
  };
  const discardTake = () => {
    take = null;
    fileInput.value = '';
    drawTake();
  };

  const drawChallenge = (current: Challenge) => {
    challengeArea.dataset.challengeId = current.challenge_id;
    challengeArea.removeAttribute('aria-busy');
    replace(
      challengeArea,
      h('p', {}, h('strong', {}, `First the statement (version ${current.statement_version})`)),
      h('blockquote', { id: 'spoken-statement', lang: current.language }, h('p', {}, current.statement)),
      h('p', {}, h('strong', {}, 'Then the phrase')),
      h('p', { id: 'spoken-phrase', class: 'phrase', lang: current.language }, current.phrase),
      h('p', { class: 'hint' }, 'This phrase serves one enrollment, until ', time(current.expires_at), '.'),
    );
  };

  /** Replaces the challenge (and the take of its phrase) with a fresh one; `why` says so to the owner. */
  const renew = async (why?: string) => {
    clearTimeout(expiry);
    // A take under way reads the old phrase: it ends, and goes with it.
    if (recorder.recording) await stopRecording();
    discardTake();
    challenge = null;
    delete challengeArea.dataset.challengeId;
    challengeArea.setAttribute('aria-busy', 'true');
    newButton.disabled = true;
    try {
      const asked = performance.now();
      const fresh = await api.spokenConsent.challenge();
      challenge = fresh;
      drawChallenge(fresh);
      replace(status, why ? h('p', { role: 'status' }, why) : null);
      // When it expires, a view still shown gets a new one; a view left behind asks for nothing. Timed
      // by the challenge's lifetime from the request, not by `expires_at` against the browser's clock,
      // which may be wrong: the new phrase comes at the latest as the old one expires, and only once.
      expiry = setTimeout(
        () => {
          if (panel.isConnected) void renew('The phrase expired, so here is a new one. Record the spoken consent again.');
        },
        limits.consentChallengeTtlSeconds * 1000 - (performance.now() - asked),
      );
    } catch (error) {
      replace(challengeArea, errorNotice(error));
      challengeArea.removeAttribute('aria-busy');
    } finally {
      newButton.disabled = false;
    }
  };

  const newButton = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      id: 'new-challenge',
      onclick: () => void renew('Here is a new phrase. Record the spoken consent again.'),
    },
    'Get a new phrase',
  );

  async function stopRecording(): Promise<void> {
    stopping = true;
    try {
      const recorded = await recorder.stop('spoken-consent');
      take = recorded.file;
      fileInput.value = '';
      recordButton.textContent = 'Record the spoken consent';
      recordButton.setAttribute('aria-pressed', 'false');
      meter.value = 0;
      live.textContent = `Recorded the spoken consent: ${seconds(recorded.seconds)}.`;
      drawTake();
    } finally {
      stopping = false;
    }
  }

  recordButton.addEventListener('click', async () => {
    try {
      if (recorder.recording) return await stopRecording();
      await recorder.start();
      recordButton.textContent = 'Stop the spoken consent';
      recordButton.setAttribute('aria-pressed', 'true');
    } catch (error) {
      live.textContent = `The microphone could not be used: ${(error as Error).message}. You can upload a recording instead.`;
    }
  });
  fileInput.addEventListener('change', () => {
    take = fileInput.files?.[0] ?? null;
    drawTake();
  });

  const panel = h(
    'div',
    { class: 'spoken-consent' },
    h(
      'p',
      {},
      'The service checks that the voice you enroll gave its consent: read aloud, in that same voice and in one recording, the statement and then the phrase below.',
    ),
    challengeArea,
    h('p', {}, newButton),
    status,
    h('div', { class: 'row' }, recordButton, h('label', { for: 'consent-level', class: 'inline' }, 'Consent level'), meter),
    live,
    takeArea,
    h('label', { for: 'consent-upload' }, 'Or upload a recording of it'),
    h('p', { class: 'hint' }, `One file, the statement then the phrase, at most ${limits.spokenConsentMaxSeconds} s.`),
    fileInput,
  );
  void renew();

  return {
    element: panel,
    submission: () => (challenge && take ? { challenge_id: challenge.challenge_id, recording: take } : null),
    used: () => void renew(),
    refused: (error) => {
      if (error instanceof ProblemError && error.code === 'consent_challenge_invalid') {
        void renew('The service no longer takes that phrase (used, or expired), so here is a new one. Record the spoken consent again.');
      }
    },
  };
}
