import { PAGE_SECURITY_HEADERS } from '@vip/shared-schema';
import { playgroundPageRoutes } from '@vip/shared-schema/routes/pages';
import type { Context, Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { script, style } from '../playground/assets.generated.js';
import { renderPlayground } from '../playground/page.js';

function page(c: Context<AppEnv>, body: string, contentType: string) {
  return c.body(body, 200, { ...PAGE_SECURITY_HEADERS, 'content-type': contentType });
}

/** GET /playground and its two assets (DESIGN section 9): public, same-origin, no inline code. */
export function mountPlayground(app: Hono<AppEnv>) {
  const { page: html, script: js, style: css } = playgroundPageRoutes;
  app.get(html.path, (c) => page(c, renderPlayground(new URL(c.req.url).origin), html.success.contentType!));
  app.get(js.path, (c) => page(c, script, js.success.contentType!));
  app.get(css.path, (c) => page(c, style, css.success.contentType!));
}
