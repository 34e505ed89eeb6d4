import { CONSENT_WORDS } from '@vip/shared-schema/audit-kinds';
import { h, replace } from '@vip/shared-schema/browser/dom';
import { time } from './messages.js';
import { api } from './session.js';

export type Voice = Awaited<ReturnType<typeof api.voices.list>>['voices'][number];

/** Every voice of the owner, page by page (the origin has no single-voice read). */
export async function allVoices(): Promise<Voice[]> {
  const voices: Voice[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.voices.list({ limit: 100, ...(cursor ? { cursor } : {}) });
    voices.push(...page.voices);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return voices;
}

/** Where a dispute of the owner's stands, in words (docs/OWNER-GUIDE.md#if-your-voice-is-enrolled-by-someone-else). */
const DISPUTE_WORDS: Record<string, string> = {
  open: 'open: the voice is held until an administrator decides',
  cleared: 'cleared: the voice stays with its owner',
  rejected: 'rejected: the disputed voice was erased',
  transferred: 'transferred: the voice is yours now',
  voice_deleted: 'ended: its owner erased the disputed voice',
};

/** The owner's disputes (the newest page): shown only when there are any. */
async function disputesSection(): Promise<HTMLElement | null> {
  const { disputes } = await api.voices.listDisputes({ limit: 100 });
  if (disputes.length === 0) return null;
  const rows = disputes.map((dispute) =>
    h(
      'tr',
      {},
      h('td', { 'data-label': 'Name' }, dispute.voice_id ? h('a', { href: `#/voices/${dispute.voice_id}` }, dispute.name) : dispute.name),
      h('td', { 'data-label': 'Where it stands' }, DISPUTE_WORDS[dispute.status] ?? dispute.status),
      h('td', { 'data-label': 'Opened' }, time(dispute.opened_at)),
    ),
  );
  return h(
    'section',
    { 'aria-labelledby': 'disputes-title', id: 'disputes' },
    h('h2', { id: 'disputes-title' }, 'Your disputes'),
    h(
      'table',
      { class: 'stack' },
      h('caption', { class: 'visually-hidden' }, 'Voices of other owners you disputed'),
      h(
        'thead',
        {},
        h('tr', {}, h('th', { scope: 'col' }, 'Name'), h('th', { scope: 'col' }, 'Where it stands'), h('th', { scope: 'col' }, 'Opened')),
      ),
      h('tbody', {}, ...rows),
    ),
  );
}

export async function renderVoices(root: HTMLElement): Promise<void> {
  const [voices, disputes] = await Promise.all([allVoices(), disputesSection()]);
  const rows = voices.map((voice) =>
    h(
      'tr',
      {},
      h('td', { 'data-label': 'Name' }, h('a', { href: `#/voices/${voice.voice_id}` }, voice.name)),
      h('td', { 'data-label': 'Status' }, voice.status),
      h('td', { 'data-label': 'Synthesis consent' }, CONSENT_WORDS[voice.consent_status] ?? voice.consent_status),
      h('td', { 'data-label': 'Enrolled' }, time(voice.created_at)),
    ),
  );
  replace(
    root,
    h('h1', {}, 'Your voices'),
    h('p', {}, h('a', { href: '#/enroll', class: 'button' }, 'Enroll a voice')),
    voices.length === 0
      ? h('p', {}, 'No voice is enrolled yet. Enroll one by recording it here or uploading recordings.')
      : h(
          'table',
          { class: 'stack' },
          h('caption', { class: 'visually-hidden' }, 'Your enrolled voices'),
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Name'),
              h('th', { scope: 'col' }, 'Status'),
              h('th', { scope: 'col' }, 'Synthesis consent'),
              h('th', { scope: 'col' }, 'Enrolled'),
            ),
          ),
          h('tbody', {}, ...rows),
        ),
    disputes,
  );
}
