import { ProblemError, type RateLimitState, rateLimitHeaders } from '@vip/shared-schema';
import { and, eq, lt, sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';
import { rateLimitWindows } from '../db/schema.js';
import type { Clock } from '../runtime.js';

export interface RateLimit {
  /** What is limited, e.g. `screening`; counted apart from every other limit of the same credential. */
  name: string;
  callsPerMinute: number;
}

/**
 * Whose calls a limit counts (a client address, a platform's API key, a user's account), in the
 * words a 429 says it with, so they match the limit the caller was told of ("per address").
 */
const COUNTED_PER = { ip: 'address', key: 'API key', user: 'account' } as const;

/** A caller as a limit counts it: `ip:<address>`, `key:<key id>` or `user:<user id>`. */
export type RateCredential = `${keyof typeof COUNTED_PER}:${string}`;

/** Each limit counts calls in fixed windows of this length, aligned to the clock's whole minutes. */
export const RATE_WINDOW_MS = 60_000;

/**
 * Counts a credential's calls in fixed one-minute windows held in the database, so the limit holds
 * across origin processes; a call past the limit is a 429 with Retry-After (the seconds until the
 * window ends) and the RateLimit headers, which an admitted call's answer carries too. The
 * credential's earlier windows are dropped as it goes, so the table stays small.
 */
export class RateLimiter {
  constructor(
    private readonly db: Database,
    private readonly clock: Clock,
  ) {}

  async take(limit: RateLimit, credential: RateCredential): Promise<Record<string, string>> {
    const now = this.clock.now().getTime();
    const windowStart = new Date(now - (now % RATE_WINDOW_MS));
    const subject = `${limit.name}:${credential}`;
    const calls = await this.db.transaction(async (tx) => {
      await tx.delete(rateLimitWindows).where(and(eq(rateLimitWindows.subject, subject), lt(rateLimitWindows.windowStart, windowStart)));
      const [row] = await tx
        .insert(rateLimitWindows)
        .values({ subject, windowStart, calls: 1 })
        .onConflictDoUpdate({
          target: [rateLimitWindows.subject, rateLimitWindows.windowStart],
          set: { calls: sql`${rateLimitWindows.calls} + 1` },
        })
        .returning({ calls: rateLimitWindows.calls });
      return row!.calls;
    });
    const resetSeconds = Math.max(1, Math.ceil((windowStart.getTime() + RATE_WINDOW_MS - now) / 1000));
    const state: RateLimitState = {
      limit: limit.callsPerMinute,
      remaining: Math.max(0, limit.callsPerMinute - calls),
      resetSeconds,
      windowSeconds: RATE_WINDOW_MS / 1000,
    };
    const headers = rateLimitHeaders(state);
    if (calls > limit.callsPerMinute) {
      const per = COUNTED_PER[credential.slice(0, credential.indexOf(':')) as keyof typeof COUNTED_PER];
      const detail = `At most ${limit.callsPerMinute} ${limit.name} calls per minute per ${per}; try again in ${resetSeconds} s.`;
      throw new ProblemError('rate_limited', detail, {
        headers: { ...headers, 'retry-after': String(resetSeconds) },
      });
    }
    return headers;
  }
}
