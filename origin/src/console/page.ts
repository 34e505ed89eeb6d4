import { renderPageShell } from '@vip/shared-schema';
import { originDocsRoute } from '@vip/shared-schema/routes/origin/http';
import { consolePageRoutes } from '@vip/shared-schema/routes/pages';

/** The console's HTML: a shell its script fills from the origin's API. The same for every owner; it holds no data. */
export const consolePage = renderPageShell({
  title: 'Owner console: Voice Identity Protection',
  brand: 'Voice Identity Protection: owner console',
  stylePath: consolePageRoutes.style.path,
  scriptPath: consolePageRoutes.script.path,
  links: [
    ['Voices', '#/voices'],
    ['Enroll', '#/enroll'],
    ['Licence requests', '#/requests'],
    ['Webhooks', '#/webhooks'],
    ['Account', '#/account'],
    ['API reference', originDocsRoute.path],
  ],
  mainHtml: `<div id="app"><p>Loading the console…</p></div>
<noscript><p>The console needs JavaScript. Everything it does is also in the API: see the API reference.</p></noscript>`,
});
