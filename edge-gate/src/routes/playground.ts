import { FAVICON_SVG, pageSecurityHeaders } from '@vip/shared-schema';
import { faviconRoute, playgroundPageRoutes } from '@vip/shared-schema/routes/pages';
import type { Context } from 'hono';
import type { AppEnv } from '../http/context.js';
import type { MountRecord } from '../http/mount-record.js';
import { script, style } from '../playground/assets.generated.js';
import { renderPlayground } from '../playground/page.js';

/** The page's script also calls the origin, where files are checked (page.ts, "Check a file"). */
function page(c: Context<AppEnv>, body: string, contentType: string) {
  const origin = new URL(c.get('config').originUrl).origin;
  return c.body(body, 200, { ...pageSecurityHeaders([origin]), 'content-type': contentType });
}

/** GET /playground and its two assets, and the icon a browser asks for on its own (docs/CONTRACT.md#closing-the-loop-receipts-pages): public, same-origin, no inline code. */
export function mountPlayground(mounts: MountRecord) {
  const { page: html, script: js, style: css } = playgroundPageRoutes;
  mounts.serve(html, (c) => page(c, renderPlayground(new URL(c.req.url).origin, c.get('config').originUrl), html.success.contentType!));
  mounts.serve(js, (c) => page(c, script, js.success.contentType!));
  mounts.serve(css, (c) => page(c, style, css.success.contentType!));
  mounts.serve(faviconRoute, (c) => page(c, FAVICON_SVG, faviconRoute.success.contentType!));
}
