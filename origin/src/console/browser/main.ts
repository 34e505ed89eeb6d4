// First: schemas built by the imports below must see it (no-eval.ts).
import '@vip/shared-schema/browser/no-eval';
import { byId, h, replace } from '@vip/shared-schema/browser/dom';
import { renderAccount, renderSignIn } from './account-view.js';
import { renderEnroll } from './enroll-view.js';
import { errorNotice } from './messages.js';
import { renderRequests } from './requests-view.js';
import { resume, signedIn, whenSessionEnds } from './session.js';
import { renderVoice } from './voice-view.js';
import { renderVoices } from './voices-view.js';
import { renderWebhooks } from './webhooks-view.js';

/**
 * The owner console: one page, one view per location hash (`#/voices`, `#/voices/<id>`, `#/enroll`,
 * `#/requests`, `#/webhooks`, `#/account`). Every view is drawn from the origin's public API.
 */

export type View = (root: HTMLElement, go: (hash: string) => void) => Promise<void>;

const routes: [RegExp, (match: RegExpExecArray) => View][] = [
  [/^#\/voices\/([0-9a-f-]{36})$/, (match) => (root, go) => renderVoice(root, go, match[1]!)],
  [/^#\/voices$/, () => renderVoices],
  [/^#\/enroll$/, () => renderEnroll],
  [/^#\/requests$/, () => renderRequests],
  [/^#\/webhooks$/, () => renderWebhooks],
  [/^#\/account$/, () => renderAccount],
];

const app = byId('app');
let notice: HTMLElement | null = null;

function go(hash: string): void {
  if (location.hash === hash) void render();
  else location.hash = hash;
}

/** Shows `message` above the next view drawn (used when a session ends on its own). */
function noticeForNextView(message: HTMLElement): void {
  notice = message;
}

function markCurrentLink(): void {
  for (const link of document.querySelectorAll<HTMLAnchorElement>('header.site nav a')) {
    const current = location.hash.startsWith(link.hash) && link.hash !== '';
    if (current) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** The first view leaves focus at the page's start (the skip link comes first); later ones move it to their heading. */
let firstRender = true;

async function render(): Promise<void> {
  markCurrentLink();
  const root = h('div', { class: 'view' });
  const route = routes.find(([pattern]) => pattern.test(location.hash));
  const view: View = !signedIn() ? renderSignIn : route ? route[1](route[0].exec(location.hash)!) : renderVoices;
  replace(app, notice, root);
  // A notice about an ended session stays on the sign-in view until the owner is back in.
  if (view !== renderSignIn) notice = null;
  try {
    await view(root, go);
  } catch (error) {
    root.append(errorNotice(error));
  }
  // Each view starts with one h1: focus goes there, so a screen reader announces where the owner is.
  const heading = root.querySelector('h1');
  if (heading) {
    heading.tabIndex = -1;
    if (!firstRender) heading.focus();
    document.title = `${heading.textContent} · Owner console`;
  }
  firstRender = false;
}

whenSessionEnds((why) => {
  noticeForNextView(h('div', { class: 'notice error', role: 'alert' }, why));
  go('#/sign-in');
});
window.addEventListener('hashchange', () => void render());
void resume().then(() => render());
