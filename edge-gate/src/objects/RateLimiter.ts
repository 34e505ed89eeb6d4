import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env.js';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
  windowSeconds: number;
}

interface Window {
  start: number;
  count: number;
}

const WINDOW_KEY = 'window';

/**
 * One per limited key (a credential, or a client IP per route). A fixed window counted in storage:
 * the object handles one request at a time, so the limit holds exactly, and survives eviction.
 */
export class RateLimiter extends DurableObject<Env> {
  async hit(limit: number, windowSeconds: number, nowMs: number): Promise<RateDecision> {
    const nowSeconds = Math.floor(nowMs / 1000);
    const start = nowSeconds - (nowSeconds % windowSeconds);
    const stored = await this.ctx.storage.get<Window>(WINDOW_KEY);
    const count = stored?.start === start ? stored.count : 0;
    const resetSeconds = start + windowSeconds - nowSeconds;
    if (count >= limit) return { allowed: false, limit, remaining: 0, resetSeconds, windowSeconds };
    await this.ctx.storage.put(WINDOW_KEY, { start, count: count + 1 } satisfies Window);
    return { allowed: true, limit, remaining: limit - count - 1, resetSeconds, windowSeconds };
  }
}
