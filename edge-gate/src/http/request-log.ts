import { REQUEST_ID_HEADER, requestIdFrom } from '@vip/shared-schema';
import { createMiddleware } from 'hono/factory';
import { routePath } from 'hono/route';
import type { Runtime } from '../runtime.js';
import type { AppEnv } from './context.js';

/**
 * Gives each request an id (kept from a well-formed `x-request-id`, echoed back) and writes one
 * structured log line when it ends. Never a body, a token or a key.
 */
export const requestLog = (runtime: Runtime) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const started = runtime.now();
    const requestId = requestIdFrom(c.req.header(REQUEST_ID_HEADER), runtime.newId);
    c.set('requestId', requestId);
    c.set('runtime', runtime);
    await next();
    c.header(REQUEST_ID_HEADER, requestId);
    console.log(
      JSON.stringify({
        request_id: requestId,
        method: c.req.method,
        route: routePath(c, -1),
        status: c.res.status,
        ms: runtime.now() - started,
      }),
    );
  });
