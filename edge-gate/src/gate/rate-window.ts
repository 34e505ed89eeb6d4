/**
 * Fixed-window counting (docs/CONTRACT.md#limits, docs/CONTRACT.md#answers-to-the-specifications-gaps), pure: the objects that store a window
 * (the caller's home CallerHome shard for the gate and redemption, RateLimiter for the demo) call this and write `next`.
 */

/** A limit: what is counted, how many per window, and the window's length. */
export interface Limit {
  /** What is counted, e.g. `gate:key:<key_id>` or `demo:ip:<address>`. */
  key: string;
  /** What is counted, for the 429's detail: "demo calls from this address", "gate checks with this API key". */
  counted: string;
  quota: number;
  windowSeconds: number;
}

/** One window as stored: its start (Unix seconds) and the requests counted in it. */
export interface RateWindow {
  start: number;
  count: number;
}

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
  windowSeconds: number;
}

/** Counts one request in the window `stored` holds; `next` is what to store, null when refused. */
export function countInWindow(
  stored: RateWindow | null | undefined,
  limit: number,
  windowSeconds: number,
  nowMs: number,
): { decision: RateDecision; next: RateWindow | null } {
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
