import { ProblemError } from '@vip/shared-schema';
import type { AppContext } from '../http/context.js';
import type { RateDecision } from '../objects/RateLimiter.js';

/**
 * Limits (spec 8, DESIGN section 6) counted by a RateLimiter object per key. Headers follow
 * draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy: "default";q=<quota>;w=<window s>`
 * and `RateLimit: "default";r=<remaining>;t=<seconds to reset>`; a refusal adds `Retry-After`.
 */
export interface Limit {
  /** What is counted, e.g. `gate:key:<key_id>` or `demo:ip:<address>`. */
  key: string;
  quota: number;
  windowSeconds: number;
}

const POLICY = 'default';

function rateLimitHeaders(decision: RateDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"${POLICY}";q=${decision.limit};w=${decision.windowSeconds}`,
    ratelimit: `"${POLICY}";r=${decision.remaining};t=${decision.resetSeconds}`,
  };
}

export async function enforceLimit(c: AppContext, limit: Limit): Promise<void> {
  const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(limit.key));
  const decision = await limiter.hit(limit.quota, limit.windowSeconds, c.get('runtime').now());
  const headers = rateLimitHeaders(decision);
  if (!decision.allowed) {
    throw new ProblemError('rate_limited', `Limit of ${limit.quota} requests per ${limit.windowSeconds} s reached.`, {
      headers: { ...headers, 'retry-after': String(Math.max(1, decision.resetSeconds)) },
    });
  }
  for (const [name, value] of Object.entries(headers)) c.header(name, value);
}
