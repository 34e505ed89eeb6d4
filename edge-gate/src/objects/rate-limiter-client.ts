import type { Limit, RateDecision } from '../gate/rate-window.js';

/** Counts one request against `limit` in the limit key's own RateLimiter object. */
export function countInRateLimiter(env: Env, limit: Limit, nowMs: number): Promise<RateDecision> {
  return env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(limit.key)).hit(limit.quota, limit.windowSeconds, nowMs);
}
