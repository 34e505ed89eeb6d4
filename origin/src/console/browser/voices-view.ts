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

export async function renderVoices(root: HTMLElement): Promise<void> {
  const voices = await allVoices();
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
  );
}
