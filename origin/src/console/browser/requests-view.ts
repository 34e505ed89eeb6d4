import { h, replace } from '@vip/shared-schema/browser/dom';
import { handleSubmit } from './fields.js';
import { termsList } from './licence-terms.js';
import { errorNotice, successNotice, time } from './messages.js';
import { api } from './session.js';
import { allVoices } from './voices-view.js';

type Go = (hash: string) => void;
type Voice = Awaited<ReturnType<typeof allVoices>>[number];
type LicenceRequest = Awaited<ReturnType<typeof api.licenseRequests.list>>['requests'][number];

/**
 * The owner's licence-request inbox: every pending request of every voice, newest first. The API
 * lists requests per voice, so the inbox asks once per voice (an owner holds a handful of voices).
 */
async function pendingRequests(voices: readonly Voice[]): Promise<{ voice: Voice; request: LicenceRequest }[]> {
  const perVoice = await Promise.all(
    voices.map(async (voice) => {
      const { requests } = await api.licenseRequests.list(voice.voice_id, { status: 'pending', limit: 100 });
      return requests.map((request) => ({ voice, request }));
    }),
  );
  return perVoice.flat().sort((a, b) => b.request.created_at.localeCompare(a.request.created_at));
}

function requestCard(voice: Voice, request: LicenceRequest, redraw: (notice: HTMLElement) => void): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' });
  const titleId = `request-${request.request_id}`;
  const reasonId = `decline-reason-${request.request_id}`;
  const decline = h(
    'form',
    { class: 'row', novalidate: true },
    h('label', { for: reasonId, class: 'inline' }, 'Reason (told to the platform, optional)'),
    h('input', { id: reasonId, name: 'reason', maxlength: 1000 }),
    h('button', { type: 'submit', class: 'danger' }, `Decline ${request.platform_name}`),
  );
  handleSubmit(decline, status, async (data) => {
    const reason = String(data.get('reason')).trim();
    await api.licenseRequests.decline(voice.voice_id, request.request_id, reason ? { reason } : {});
    redraw(successNotice(`Declined the request of ${request.platform_name} for "${voice.name}". The platform is told.`));
    return undefined;
  });
  return h(
    'article',
    { class: 'card', 'aria-labelledby': titleId, 'data-request': request.request_id },
    h('h2', { id: titleId }, `${request.platform_name} asks to license "${voice.name}"`),
    h(
      'ul',
      {},
      h('li', {}, `For: ${request.scopes.join(', ')}`),
      h('li', {}, 'Until: ', time(request.expires_at)),
      h('li', {}, 'Asked: ', time(request.created_at)),
      h('li', {}, 'Voice: ', h('a', { href: `#/voices/${voice.voice_id}` }, voice.name)),
    ),
    h('h3', {}, 'Terms asked for'),
    h('p', { class: 'hint' }, 'Approving records these terms in the licence, as shown here.'),
    termsList(request),
    request.message ? h('blockquote', {}, h('p', {}, request.message)) : null,
    h(
      'p',
      {},
      h(
        'button',
        {
          type: 'button',
          onclick: async (event) => {
            const button = event.currentTarget as HTMLButtonElement;
            button.disabled = true;
            try {
              await api.licenseRequests.approve(voice.voice_id, request.request_id);
              redraw(
                successNotice(
                  `Approved: ${request.platform_name} holds a licence of "${voice.name}" for ${request.scopes.join(', ')}. Its licence token goes to the platform only. `,
                  h('a', { href: `#/voices/${voice.voice_id}` }, `Open ${voice.name}`),
                ),
              );
            } catch (error) {
              button.disabled = false;
              replace(status, errorNotice(error));
            }
          },
        },
        `Approve ${request.platform_name}`,
      ),
    ),
    decline,
    status,
  );
}

export async function renderRequests(root: HTMLElement, go: Go, notice?: HTMLElement): Promise<void> {
  const voices = await allVoices();
  const pending = await pendingRequests(voices);
  const redraw = (next: HTMLElement) =>
    void renderRequests(root, go, next)
      .then(() => root.querySelector('h1')?.focus())
      .catch((error) => root.append(errorNotice(error)));
  replace(
    root,
    h('h1', { tabindex: -1 }, 'Licence requests'),
    h(
      'p',
      {},
      'Platforms the gate refused for want of a licence can ask you for one. Approving creates the licence on the terms asked (renew or revoke it later from the voice); declining tells the platform.',
    ),
    notice ?? null,
    pending.length === 0
      ? h('p', { id: 'no-requests' }, 'No request is waiting.')
      : h('div', { id: 'requests' }, ...pending.map(({ voice, request }) => requestCard(voice, request, redraw))),
  );
}
