import { limits, ProblemError } from '@vip/shared-schema';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from './context.js';

const encoder = new TextEncoder();

/**
 * The edge's own limits on a request's target and headers, the same as the origin's
 * (`limits.urlMaxBytes`, `limits.headersMaxBytes`), so a request past them is refused with a problem
 * before any route runs. What the runtime's parser refuses itself (workerd's, or Cloudflare's front
 * line in production, past their larger limits) never reaches the Worker: docs/CONTRACT.md#transport-errors.
 */
export const transportLimits = createMiddleware<AppEnv>(async (c, next) => {
  const url = new URL(c.req.url);
  const target = encoder.encode(url.pathname + url.search).length;
  if (target > limits.urlMaxBytes) {
    throw new ProblemError('uri_too_long', `The request target is longer than ${limits.urlMaxBytes} bytes.`);
  }
  // As on the wire: the request line, then `name: value` and CRLF per header.
  let headerBytes = c.req.method.length + target + ' HTTP/1.1\r\n'.length;
  for (const [name, value] of c.req.raw.headers) headerBytes += encoder.encode(`${name}: ${value}\r\n`).length;
  if (headerBytes > limits.headersMaxBytes) {
    throw new ProblemError('headers_too_large', `The request line and headers exceed ${limits.headersMaxBytes} bytes.`);
  }
  await next();
});
