import { ProblemError } from '@vip/shared-schema';
import type { Limit, RateDecision } from '../gate/rate-window.js';
import type { AppContext } from './context.js';

/**
 * Headers follow draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy: "default";q=<quota>;w=<window s>`
 * and `RateLimit: "default";r=<remaining>;t=<seconds to reset>`; a refusal adds `Retry-After`.
 */
const POLICY = 'default';

function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"${POLICY}";q=${decision.limit};w=${decision.windowSeconds}`,
    ratelimit: `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

/** A refusal becomes a 429; an admission sets the RateLimit headers on the answer. */
export function applyRateDecision(c: AppContext, limit: Limit, decision: RateDecision): void {
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    throw new ProblemError('rate_limited', `Limit of ${limit.quota} requests per ${limit.windowSeconds} s reached.`, {
      headers: { ...headers, 'retry-after': String(Math.max(1, decision.resetSeconds)) },
    });
  }
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}
