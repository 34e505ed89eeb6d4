import { DurableObject } from 'cloudflare:workers';
import { countInWindow, type RateDecision, type RateWindow } from '../gate/rate-window.js';

const WINDOW_KEY = 'window';

/**
 * One per limited key (a client IP for the demo). A fixed window counted in storage: the object
 * handles one request at a time, so the limit holds exactly, and survives eviction. The gate's and
 * redemption's limits are counted by the caller's home CallerHome shard (see there).
 */
export class RateLimiter extends DurableObject<Env> {
  async hit(limit: number, windowSeconds: number, nowMs: number): Promise<RateDecision> {
    const { decision, next } = countInWindow(await this.ctx.storage.get<RateWindow>(WINDOW_KEY), limit, windowSeconds, nowMs);
    if (next) await this.ctx.storage.put(WINDOW_KEY, next satisfies RateWindow);
    return decision;
  }
}
