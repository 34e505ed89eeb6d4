import { ProblemError, rateLimitHeaders } from '@vip/shared-schema';
import type { Limit, RateDecision } from '../gate/rate-window.js';
import type { AppContext } from './context.js';

/** A refusal becomes a 429; an admission sets the RateLimit headers on the answer. */
export function applyRateDecision(c: AppContext, limit: Limit, decision: RateDecision): void {
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    const wait = Math.max(1, decision.resetSeconds);
    throw new ProblemError(
      'rate_limited',
      `Limit of ${limit.quota} ${limit.counted} per ${limit.windowSeconds} s reached; try again in ${wait} s.`,
      {
        headers: { ...headers, 'retry-after': String(wait) },
      },
    );
  }
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}
