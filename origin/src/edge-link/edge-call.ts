import { signInternalRequest } from '@vip/shared-schema';
import type { z } from 'zod';
import { parseJsonOrUndefined } from '../parse-json.js';
import type { Clock } from '../runtime.js';

/** Where the edge's internal routes are, and the secret both planes sign them with. */
export interface EdgeTarget {
  url: string;
  internalSecret: string;
}

/** The edge answered, but not with what the route promises (unlike an edge that could not be reached). */
export class EdgeAnswerError extends Error {
  override name = 'EdgeAnswerError';
}

export interface EdgeCall {
  edge: EdgeTarget;
  fetch: typeof fetch;
  clock: Clock;
  timeoutMs: number;
}

/**
 * One origin → edge call (index sync, audit pull): POSTs `body` to `path` with the internal-auth
 * signature and a timeout, and parses the 2xx answer with `schema`. A non-2xx or unexpected answer
 * throws EdgeAnswerError; a network failure or a timeout surfaces as fetch's own error.
 */
export async function callEdge<S extends z.ZodType>(
  call: EdgeCall,
  path: string,
  body: string,
  schema: S,
  expected: string,
): Promise<z.infer<S>> {
  const signature = await signInternalRequest(call.edge.internalSecret, 'POST', path, body, call.clock.now().getTime() / 1000);
  const response = await call.fetch(new URL(path, call.edge.url).toString(), {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signature },
    body,
    signal: AbortSignal.timeout(call.timeoutMs),
  });
  const text = await response.text();
  if (!response.ok) throw new EdgeAnswerError(`edge answered ${response.status}`);
  const parsed = schema.safeParse(parseJsonOrUndefined(text));
  if (!parsed.success) throw new EdgeAnswerError(`edge answered 2xx without ${expected}`);
  return parsed.data;
}
