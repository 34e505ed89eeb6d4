import { ProblemError } from '@vip/shared-schema';
import type { AppContext } from '../http/context.js';
import type { RateDecision } from '../objects/RateLimiter.js';

/**
 * Limits (spec 8, DESIGN section 6) counted exactly in Durable Object storage. Headers follow
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

/** One fixed window of a limit, as stored by the object that counts it. */
export function countInWindow(
  stored: { start: number; count: number } | null | undefined,
  limit: number,
  windowSeconds: number,
  nowMs: number,
): { decision: RateDecision; next: { start: number; count: number } | null } {
  const nowSeconds = Math.floor(nowMs / 1000);
  const start = nowSeconds - (nowSeconds % windowSeconds);
  const count = stored?.start === start ? stored.count : 0;
  const resetSeconds = start + windowSeconds - nowSeconds;
  if (count >= limit) return { decision: { allowed: false, limit, remaining: 0, resetSeconds, windowSeconds }, next: null };
  return {
    decision: { allowed: true, limit, remaining: limit - count - 1, resetSeconds, windowSeconds },
    next: { start, count: count + 1 },
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

/** Counts the request in the key's RateLimiter object (demo and redemption). */
export async function enforceLimit(c: AppContext, limit: Limit): Promise<void> {
  const limiter = c.env.RATE_LIMITER.get(c.env.RATE_LIMITER.idFromName(limit.key));
  applyRateDecision(c, limit, await limiter.hit(limit.quota, limit.windowSeconds, c.get('runtime').now()));
}
