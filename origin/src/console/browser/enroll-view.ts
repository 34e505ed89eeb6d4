import { h, replace } from '@vip/shared-schema/browser/dom';
import { ProblemError } from '@vip/shared-schema/client';
import { limits } from '@vip/shared-schema/limits';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema/pages';
import { disputeOffer } from './dispute-offer.js';
import { handleSubmit } from './fields.js';
import { errorNotice, successNotice, time } from './messages.js';
import { qualityTable, recordingsPanel, seconds } from './recordings.js';
import { api } from './session.js';
import { spokenConsentPanel } from './spoken-consent.js';
import { STATUS_WORDS } from './voice-view.js';

/** Kept while the tab is open, so a failed attempt can be retried without consenting again. */
interface Consent {
  consentId: string;
  grantedAt: string;
}
let consent: Consent | null = null;

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
    // The statement scrolls inside its box on a small screen: focusable, so a keyboard scrolls it too.
    h(
      'div',
      { class: 'statement', id: 'consent-statement', tabindex: 0, role: 'region', 'aria-label': 'Consent statement' },
      ...BIOMETRIC_CONSENT_STATEMENT.paragraphs.map((text) => h('p', {}, text)),
    ),
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
    const granted = await api.biometricConsent.grant({
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
  const recordings = recordingsPanel();
  const spokenConsent = spokenConsentPanel();
  const result = h('div', { id: 'enroll-result' });
  // Apart from the result, so that giving the consent a dispute needs does not clear the offer with the old notices.
  const disputeSlot = h('div', { id: 'dispute-slot' });
  const drawConsent = (): void =>
    replace(
      consentSlot,
      consentSection(() => {
        drawConsent();
        // A notice from before ("Give your biometric consent first") no longer holds.
        replace(result);
      }),
    );

  const nameInput = h('input', { id: 'voice-name', name: 'name', required: true, maxlength: 100, autocomplete: 'off' });
  /**
   * A dispute of the other owner's voice with these takes, read when its button is pressed: after a
   * 409 the consent and the spoken consent of the refused enrollment are still unused; after a held
   * enrollment the page asks for new ones first.
   */
  const offerDispute = (files: File[]) =>
    disputeOffer(
      () => {
        const spoken = spokenConsent.submission();
        return consent && spoken
          ? { name: nameInput.value.trim(), consent_id: consent.consentId, audio: files, spoken_consent: spoken }
          : null;
      },
      () => {
        // The dispute spent the challenge, and holds the consent for the voice it may become.
        spokenConsent.used();
        consent = null;
        drawConsent();
      },
    );
  const enrollButton = h('button', { type: 'button', id: 'enroll' }, 'Enroll this voice');
  enrollButton.addEventListener('click', async () => {
    const files = recordings.files();
    if (!consent) return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Give your biometric consent first (step 1).'));
    if (!nameInput.value.trim()) {
      nameInput.focus();
      return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Give the voice a name (step 2).'));
    }
    if (files.length === 0)
      return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Record a take or choose a file (step 3).'));
    enrollButton.disabled = true;
    replace(disputeSlot);
    replace(result, h('p', { role: 'status' }, 'Enrolling: the service is measuring your recordings…'));
    // Sent when the owner recorded one; whether an enrollment without one is taken is the service's setting, and its refusal says so.
    const spoken = spokenConsent.submission();
    try {
      const voice = await api.voices.enroll({
        name: nameInput.value.trim(),
        consent_id: consent.consentId,
        audio: files,
        ...(spoken ? { spoken_consent: spoken } : {}),
      });
      if (spoken) spokenConsent.used();
      consent = null;
      // A consent serves one voice: the next enrollment asks again; the takes were used.
      drawConsent();
      recordings.enrolled(voice.speech_seconds);
      replace(
        result,
        successNotice(
          `Enrolled "${voice.name}" from ${seconds(voice.speech_seconds)} of speech. Status: ${STATUS_WORDS[voice.status] ?? voice.status}`,
        ),
        qualityTable(voice.quality),
        h('p', {}, h('a', { href: `#/voices/${voice.voice_id}`, id: 'open-voice' }, `Open ${voice.name}: consent and licences`)),
      );
      // Held because it sounds like another owner's voice: if that voice was taken from this person, they can say so.
      if (voice.status === 'pending_review') replace(disputeSlot, offerDispute(files));
      result.querySelector('a')?.focus();
    } catch (error) {
      replace(result, errorNotice(error));
      spokenConsent.refused(error);
      if (error instanceof ProblemError && error.code === 'identity_conflict') replace(disputeSlot, offerDispute(files));
    } finally {
      enrollButton.disabled = false;
    }
  });

  replace(
    root,
    h('h1', {}, 'Enroll a voice'),
    h(
      'p',
      {},
      `Five steps: consent, a name, ${limits.enrollMinSpeechSeconds} seconds or more of your speech, the consent read aloud in that voice, and enrollment.`,
    ),
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
      recordings.element,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'spoken-consent-title' },
      h('h2', { id: 'spoken-consent-title' }, '4. Spoken consent'),
      spokenConsent.element,
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'enroll-title' },
      h('h2', { id: 'enroll-title' }, '5. Enroll'),
      enrollButton,
      result,
      disputeSlot,
    ),
  );
  drawConsent();
}
