import { auditEntryWords, CONSENT_WORDS } from '@vip/shared-schema/audit-kinds';
import { h, prettyJson, replace } from '@vip/shared-schema/browser/dom';
import { INTENDED_USES } from '@vip/shared-schema/enums';
import { checkboxGroup, handleSubmit } from './fields.js';
import { termsFields, termsList, termsOf } from './licence-terms.js';
import { errorNotice, preciseTime, successNotice, time } from './messages.js';
import { receiptControl } from './receipt.js';
import { qualityTable, recordingsPanel, seconds } from './recordings.js';
import { api } from './session.js';
import { spokenConsentPanel } from './spoken-consent.js';
import { allVoices, type Voice } from './voices-view.js';

type Go = (hash: string) => void;
type Licence = Awaited<ReturnType<typeof api.licenses.list>>['licenses'][number];

/** A voice's status in plain words; `pending_review` is the hold docs/ARCHITECTURE.md#voiceprints describes. */
export const STATUS_WORDS: Record<string, string> = {
  ready: 'ready: protected by the gate.',
  pending_review:
    'held for review: it sounds very close to a voice another owner enrolled, so an administrator checks it before it is protected. Both owners are told; the gate refuses every platform meanwhile.',
};

/** A date input's value (yyyy-mm-dd) as the end of that day, UTC. */
const endOfDay = (date: string) => new Date(`${date}T23:59:59.000Z`).toISOString();
const inDays = (days: number) => new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10);

async function timeline(voiceId: string): Promise<HTMLElement> {
  const list = h('ol', { class: 'timeline', id: 'timeline' });
  const more = h('p');
  const load = async (cursor?: string) => {
    // In the order the decisions were made: the edge's reach the chain later and in batches, so `seq` order can put a redemption before its approval.
    const page = await api.audit.list({ voice_id: voiceId, order: 'decided_at', limit: 50, ...(cursor ? { cursor } : {}) });
    for (const entry of page.entries) {
      list.append(
        h(
          'li',
          { 'data-kind': entry.kind, 'data-decision': entry.decision ?? '', 'data-action': entry.action ?? '' },
          preciseTime(entry.decided_at),
          ' ',
          auditEntryWords(entry),
          h('span', { class: 'hint' }, ` Check ${entry.check_id}, entry ${entry.seq}.`),
          receiptControl(entry.check_id, `entry ${entry.seq}`),
        ),
      );
    }
    replace(
      more,
      page.next_cursor
        ? h('button', { type: 'button', class: 'secondary', onclick: () => void load(page.next_cursor ?? undefined) }, 'Show later entries')
        : null,
    );
  };
  await load();
  if (!list.firstChild) list.append(h('li', {}, 'Nothing yet: no platform has asked for this voice.'));
  return h('div', {}, list, more);
}

function licenceRow(voiceId: string, licence: Licence, redraw: () => void): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' });
  const dateId = `renew-${licence.license_id}`;
  const renewDate = h('input', { type: 'date', id: dateId, value: inDays(365), min: inDays(1) });
  const active = licence.status === 'active';
  return h(
    'tr',
    { 'data-license': licence.license_id },
    h('td', { 'data-label': 'Platform' }, licence.platform_name),
    h('td', { 'data-label': 'Uses' }, licence.scopes.join(', ')),
    h('td', { 'data-label': 'Terms' }, termsList(licence)),
    h('td', { 'data-label': 'Expires' }, time(licence.expires_at)),
    h('td', { 'data-label': 'Status' }, licence.status),
    h(
      'td',
      { 'data-label': 'Actions' },
      active
        ? h(
            'div',
            { class: 'row' },
            h('label', { for: dateId, class: 'inline' }, 'Renew until'),
            renewDate,
            h(
              'button',
              {
                type: 'button',
                class: 'secondary',
                onclick: async () => {
                  try {
                    await api.licenses.renew(voiceId, licence.license_id, { expires_at: endOfDay(renewDate.value) });
                    redraw();
                  } catch (error) {
                    replace(status, errorNotice(error));
                  }
                },
              },
              `Renew ${licence.platform_name}`,
            ),
            h(
              'button',
              {
                type: 'button',
                class: 'danger',
                onclick: async () => {
                  try {
                    await api.licenses.revoke(voiceId, licence.license_id);
                    redraw();
                  } catch (error) {
                    replace(status, errorNotice(error));
                  }
                },
              },
              `Revoke ${licence.platform_name}`,
            ),
          )
        : null,
      status,
    ),
  );
}

function grantForm(voiceId: string, redraw: (notice: HTMLElement) => void): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { 'aria-labelledby': 'grant-title', novalidate: true },
    h('h3', { id: 'grant-title' }, 'Grant a licence'),
    h('label', { for: 'grant-platform' }, 'Platform name'),
    h('p', { class: 'hint', id: 'grant-platform-hint' }, 'Exactly as the platform is registered with this service.'),
    h('input', { id: 'grant-platform', name: 'platform_name', required: true, 'aria-describedby': 'grant-platform-hint' }),
    checkboxGroup('Uses it covers', 'scopes', INTENDED_USES),
    h('label', { for: 'grant-expires' }, 'Expires at the end of'),
    h('input', { id: 'grant-expires', name: 'expires', type: 'date', value: inDays(365), min: inDays(1), required: true }),
    ...termsFields('grant'),
    h('p', {}, h('button', { type: 'submit' }, 'Grant licence')),
    status,
  );
  handleSubmit(form, status, async (data) => {
    const licence = await api.licenses.create(voiceId, {
      platform_name: String(data.get('platform_name')).trim(),
      scopes: data.getAll('scopes').map(String) as (typeof INTENDED_USES)[number][],
      expires_at: endOfDay(String(data.get('expires'))),
      ...termsOf(data),
    });
    redraw(
      successNotice(
        `Licence granted to ${licence.platform_name}. Its licence token, shown only now, for the platform: `,
        h('code', { id: 'license-token' }, licence.license_token),
      ),
    );
    return undefined;
  });
  return form;
}

function consentControl(voiceId: string, consentStatus: string, redraw: () => void): HTMLElement {
  const on = consentStatus === 'active';
  const status = h('div', { 'aria-live': 'polite' });
  return h(
    'div',
    {},
    h('p', { id: 'consent-state' }, `Synthesis consent is ${CONSENT_WORDS[consentStatus] ?? consentStatus}`),
    h(
      'button',
      {
        type: 'button',
        id: 'toggle-consent',
        class: on ? 'danger' : '',
        onclick: async () => {
          try {
            await api.synthesisConsent.set(voiceId, on ? 'withdrawn' : 'active');
            redraw();
          } catch (error) {
            replace(status, errorNotice(error));
          }
        },
      },
      on ? 'Withdraw synthesis consent' : 'Give synthesis consent',
    ),
    status,
  );
}

/**
 * New recordings for the voice (POST /api/v1/voices/{voice_id}/re-enroll): a voiceprint of the
 * model the service runs now, the voice keeping its id, consents and licences. Needed after a model
 * upgrade (`voiceprint_current` false), and open to any voice, for better takes.
 */
function voiceprintSection(voice: Voice, redraw: (notice?: HTMLElement) => void): HTMLElement {
  const panel = h('div', { id: 'reenroll-panel', hidden: true });
  const open = h(
    'button',
    { type: 'button', id: 'reenroll', 'aria-expanded': 'false', 'aria-controls': 'reenroll-panel' },
    'Re-record this voice',
  );
  open.addEventListener('click', () => {
    if (!panel.firstChild) fillReenrollPanel(panel, voice, redraw);
    panel.hidden = !panel.hidden;
    open.setAttribute('aria-expanded', String(!panel.hidden));
  });
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'voiceprint-title' },
    h('h2', { id: 'voiceprint-title' }, 'Voiceprint'),
    voice.voiceprint_current
      ? h('p', {}, `Made by the speaker model the service runs now (${voice.model}).`)
      : h(
          'p',
          { class: 'notice warning', id: 'voiceprint-outdated' },
          `This voiceprint was made by an older speaker model (${voice.model}) than the one the service runs now. `,
          'The gate still applies your consent and licences, but screening and other enrollments do not find this voice until you re-record it.',
        ),
    h(
      'p',
      { class: 'hint' },
      'Re-recording replaces the voiceprint with one made from new recordings, under the same identity check as an enrollment; the voice keeps its id, your consents and its licences. If the service refuses the recordings, the old voiceprint stays.',
    ),
    open,
    panel,
  );
}

function fillReenrollPanel(panel: HTMLElement, voice: Voice, redraw: (notice?: HTMLElement) => void): void {
  const recordings = recordingsPanel();
  const spokenConsent = spokenConsentPanel();
  const result = h('div', { id: 'reenroll-result' });
  const send = h('button', { type: 'button', id: 'send-reenroll' }, 'Replace the voiceprint');
  send.addEventListener('click', async () => {
    const files = recordings.files();
    if (files.length === 0)
      return replace(result, h('div', { class: 'notice error', role: 'alert' }, 'Record a take or choose a file first.'));
    send.disabled = true;
    replace(result, h('p', { role: 'status' }, 'Re-recording: the service is measuring your recordings…'));
    const spoken = spokenConsent.submission();
    try {
      const renewed = await api.voices.reenroll(voice.voice_id, files, spoken ?? undefined);
      redraw(
        h(
          'div',
          { id: 'reenrolled' },
          successNotice(
            `Re-recorded "${renewed.name}" from ${seconds(renewed.speech_seconds)} of speech, under the speaker model ${renewed.model}. Status: ${STATUS_WORDS[renewed.status] ?? renewed.status}`,
          ),
          qualityTable(renewed.quality),
        ),
      );
    } catch (error) {
      replace(result, errorNotice(error));
      spokenConsent.refused(error);
    } finally {
      send.disabled = false;
    }
  });
  replace(
    panel,
    h('h3', {}, 'New recordings'),
    recordings.element,
    h('h3', {}, 'Spoken consent'),
    spokenConsent.element,
    h('p', {}, send),
    result,
  );
}

function deleteControl(voiceId: string, name: string, go: Go): HTMLElement {
  const area = h('div', { 'aria-live': 'polite' });
  const ask = h(
    'button',
    {
      type: 'button',
      class: 'danger',
      id: 'delete-voice',
      onclick: () => {
        const confirm = h(
          'button',
          {
            type: 'button',
            class: 'danger',
            id: 'confirm-delete',
            onclick: async () => {
              try {
                const receipt = await api.voices.delete(voiceId);
                replace(
                  area,
                  successNotice(`"${name}" is erased.`),
                  h('h3', {}, 'Erasure receipt'),
                  h(
                    'ul',
                    { id: 'erasure-receipt' },
                    h('li', {}, `Voiceprints removed: ${receipt.erased.embeddings}`),
                    h('li', {}, `Licences removed: ${receipt.erased.licenses}`),
                    h('li', {}, `Biometric consents removed: ${receipt.erased.consents}`),
                    h('li', {}, `Edge record removal queued: ${receipt.erased.edge_index ? 'yes' : 'no'}`),
                  ),
                  h('pre', { 'aria-label': 'Erasure receipt as JSON' }, prettyJson(receipt)),
                  h('p', { class: 'hint' }, 'The audit log keeps the decisions made about this voice; they hold no biometric data.'),
                  h('p', {}, h('a', { href: '#/voices' }, 'Back to your voices')),
                );
                area.querySelector('h3')?.setAttribute('tabindex', '-1');
                area.querySelector<HTMLElement>('h3')?.focus();
              } catch (error) {
                replace(area, errorNotice(error));
              }
            },
          },
          `Yes, erase ${name} now`,
        );
        replace(
          area,
          h('p', { role: 'alert' }, 'This erases the voiceprint, every licence and the consent, and cannot be undone.'),
          h(
            'div',
            { class: 'row' },
            confirm,
            h('button', { type: 'button', class: 'secondary', onclick: () => go(`#/voices/${voiceId}`) }, 'Keep it'),
          ),
        );
        confirm.focus();
      },
    },
    'Delete this voice…',
  );
  return h('div', {}, ask, area);
}

export async function renderVoice(root: HTMLElement, go: Go, voiceId: string, notice?: HTMLElement): Promise<void> {
  const voice = (await allVoices()).find((candidate) => candidate.voice_id === voiceId);
  if (!voice) {
    replace(root, h('h1', {}, 'Voice not found'), h('p', {}, h('a', { href: '#/voices' }, 'Back to your voices')));
    return;
  }
  const [{ licenses }, { requests }, history] = await Promise.all([
    api.licenses.list(voiceId),
    api.licenseRequests.list(voiceId, { status: 'pending', limit: 100 }),
    timeline(voiceId),
  ]);
  // After a change the view is drawn again and focus returns to its heading, not to the page's start.
  const redraw = (next?: HTMLElement) =>
    void renderVoice(root, go, voiceId, next)
      .then(() => root.querySelector('h1')?.focus())
      .catch((error) => root.append(errorNotice(error)));
  replace(
    root,
    h('h1', { tabindex: -1 }, voice.name),
    notice ?? null,
    h(
      'p',
      {},
      `Status: ${STATUS_WORDS[voice.status] ?? voice.status} Enrolled `,
      time(voice.created_at),
      `, ${voice.speech_seconds.toFixed(1)} s of speech.`,
    ),
    voiceprintSection(voice, redraw),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'synthesis-title' },
      h('h2', { id: 'synthesis-title' }, 'Synthesis consent'),
      consentControl(voiceId, voice.consent_status, () => redraw()),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'licences-title' },
      h('h2', { id: 'licences-title' }, 'Licences'),
      requests.length
        ? h(
            'p',
            { class: 'notice warning' },
            `${requests.length === 1 ? 'A platform asks' : `${requests.length} platforms ask`} for a licence of this voice: `,
            h('a', { href: '#/requests' }, 'answer in the licence requests'),
            '.',
          )
        : null,
      licenses.length === 0
        ? h('p', {}, 'No licence yet.')
        : h(
            'table',
            { class: 'stack', id: 'licences' },
            h('caption', { class: 'visually-hidden' }, 'Licences of this voice'),
            h(
              'thead',
              {},
              h('tr', {}, ...['Platform', 'Uses', 'Terms', 'Expires', 'Status', 'Actions'].map((name) => h('th', { scope: 'col' }, name))),
            ),
            h('tbody', {}, ...licenses.map((licence) => licenceRow(voiceId, licence, () => redraw()))),
          ),
      grantForm(voiceId, redraw),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'timeline-title' },
      h('h2', { id: 'timeline-title' }, 'Who asked for this voice'),
      h(
        'p',
        { class: 'hint' },
        "Every check a platform made, and every change you made, from the audit log (oldest first). Each entry has a receipt: proof, checked here in your browser, that the entry is in the service's signed transparency log; keep it to show later what was decided.",
      ),
      history,
      h('button', { type: 'button', class: 'secondary', id: 'refresh-timeline', onclick: () => redraw() }, 'Refresh'),
    ),
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'delete-title' },
      h('h2', { id: 'delete-title' }, 'Delete'),
      deleteControl(voiceId, voice.name, go),
    ),
  );
}
