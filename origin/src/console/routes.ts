import { FAVICON_SVG, PAGE_SECURITY_HEADERS } from '@vip/shared-schema';
import { consolePageRoutes, faviconRoute } from '@vip/shared-schema/routes/pages';
import { addRoute, type RouteKit } from '../http/routes.js';
import { script, style } from './assets.generated.js';
import { consolePage } from './page.js';

/** GET /console and its two assets, and the icon a browser asks for on its own (docs/CONTRACT.md#closing-the-loop-receipts-pages): public, same-origin, no inline code, strict CSP. */
export function registerConsoleRoutes({ app, registry }: RouteKit): void {
  // A scope of its own, so the page headers go with these three answers only.
  app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(PAGE_SECURITY_HEADERS);
    });
    addRoute(scope, registry, consolePageRoutes.page, { handler: () => consolePage });
    addRoute(scope, registry, consolePageRoutes.script, { handler: () => script });
    addRoute(scope, registry, consolePageRoutes.style, { handler: () => style });
    addRoute(scope, registry, faviconRoute, { handler: () => FAVICON_SVG });
  });
}
