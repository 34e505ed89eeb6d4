/** Where a caller stands against a rate limit, as both planes tell it. */
export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Seconds until the current window ends. */
  resetSeconds: number;
  windowSeconds: number;
}

/**
 * Headers follow draft-ietf-httpapi-ratelimit-headers-11: `RateLimit-Policy: "default";q=<quota>;w=<window s>`
 * and `RateLimit: "default";r=<remaining>;t=<seconds to reset>`; a refusal adds `Retry-After`.
 */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'ratelimit-policy': `"default";q=${state.limit};w=${state.windowSeconds}`,
    ratelimit: `"default";r=${state.remaining};t=${state.resetSeconds}`,
  };
}

/** Request ids: a caller's well-formed `x-request-id` is kept so traces join up; anything else is replaced. */
export const REQUEST_ID_HEADER = 'x-request-id';
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdFrom(header: string | null | undefined, generate: () => string): string {
  return header && WELL_FORMED_REQUEST_ID.test(header) ? header : generate();
}
