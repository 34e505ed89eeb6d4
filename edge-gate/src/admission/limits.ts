import type { Limit } from '../gate/rate-window.js';
import type { AppContext } from '../http/context.js';
import { applyRateDecision } from '../http/rate-limit-headers.js';
import { countInRateLimiter } from '../objects/rate-limiter-client.js';

/** Counts the request in the key's RateLimiter object (the demo; the gate and redemption count in the caller's home CallerHome shard): a 429 when refused. */
export async function enforceLimit(c: AppContext, limit: Limit): Promise<void> {
  applyRateDecision(c, limit, await countInRateLimiter(c.env, limit, c.get('runtime').now()));
}
