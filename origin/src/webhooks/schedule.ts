/** Standard Webhooks' schedule (docs/CONTRACT.md#answers-to-the-specifications-gaps): the delay before each attempt, in seconds. */
export const DEFAULT_RETRY_SCHEDULE_SECONDS = [0, 5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 14 * 3600, 20 * 3600, 24 * 3600];

/** A receiver's Retry-After is obeyed up to this long. */
const RETRY_AFTER_MAX_SECONDS = 24 * 3600;

/**
 * When the next attempt is due after `attemptsMade` failed ones, or null when the schedule is used
 * up. Retry-After wins over the schedule; jitter (± `jitter` of the delay) spreads retries of many
 * deliveries that failed together.
 */
export function nextAttemptDelayMs(
  schedule: readonly number[],
  attemptsMade: number,
  retryAfterSeconds: number | null,
  random: () => number,
  jitter: number,
): number | null {
  if (attemptsMade >= schedule.length) return null;
  if (retryAfterSeconds !== null) return Math.min(retryAfterSeconds, RETRY_AFTER_MAX_SECONDS) * 1000;
  const base = schedule[attemptsMade]! * 1000;
  return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
}

/** RFC 9110 Retry-After: delay-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, Math.ceil((date - now.getTime()) / 1000));
}
