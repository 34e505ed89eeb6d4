import type { z } from 'zod';
import type { FieldError, Problem, ProblemCode } from '../problem.js';

/**
 * What a client call throws. A `ProblemError` is the service saying no (RFC 9457 problem+json, its
 * `code` from shared-schema/src/problem.ts). A `ContractError` is the client and the service no
 * longer agreeing on a shape: a response that matches neither the route's success schema nor the
 * problem schema. It is meant to fail loudly, not to be retried.
 *
 * This `ProblemError` is not the one in `shared-schema/src/problem.ts`: that one is thrown inside a
 * plane and rendered by its error handler; this one describes an answer received from a plane.
 */

/** `RateLimit` / `RateLimit-Policy` headers (draft-ietf-httpapi-ratelimit-headers), when the answer had them. */
export interface RateLimitInfo {
  /** Requests allowed per window (`q` of `RateLimit-Policy`). */
  quota: number | null;
  /** Window length in seconds (`w` of `RateLimit-Policy`). */
  windowSeconds: number | null;
  /** Requests left in the current window (`r` of `RateLimit`). */
  remaining: number | null;
  /** Seconds until the window resets (`t` of `RateLimit`). */
  resetSeconds: number | null;
}

const parameter = (header: string | null, name: string): number | null => {
  const match = header ? new RegExp(`(?:^|;)\\s*${name}=(\\d+)`).exec(header) : null;
  return match ? Number(match[1]) : null;
};

export function parseRateLimit(headers: Headers): RateLimitInfo | null {
  const policy = headers.get('ratelimit-policy');
  const current = headers.get('ratelimit');
  if (policy === null && current === null) return null;
  return {
    quota: parameter(policy, 'q'),
    windowSeconds: parameter(policy, 'w'),
    remaining: parameter(current, 'r'),
    resetSeconds: parameter(current, 't'),
  };
}

/** `Retry-After` as seconds from now: delta-seconds or an HTTP-date (RFC 9110 10.2.3); null when absent or unreadable. */
export function parseRetryAfter(value: string | null, nowMs: number = Date.now()): number | null {
  if (value === null) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - nowMs) / 1000));
}

export class ProblemError extends Error {
  override readonly name = 'ProblemError';
  /** HTTP status of the response (equal to `problem.status`; a mismatch is a ContractError). */
  readonly status: number;
  readonly code: ProblemCode;
  readonly title: string;
  readonly detail: string;
  /** `urn:vip:problem:<code>` */
  readonly type: string;
  readonly instance: string;
  /** The `request_id` of the problem: quote it when asking the operator about this call. */
  readonly requestId: string;
  /** Field errors of a 422 (`body.voice_id`, `query.cursor`, ...); empty otherwise. */
  readonly errors: FieldError[];
  /** Seconds to wait before retrying, from `Retry-After` (429, and 503 from a busy plane); null when absent. */
  readonly retryAfter: number | null;
  readonly rateLimit: RateLimitInfo | null;
  /** The problem body exactly as parsed. */
  readonly problem: Problem;
  readonly headers: Headers;

  constructor(problem: Problem, headers: Headers) {
    super(`${problem.status} ${problem.code}: ${problem.detail}`);
    this.status = problem.status;
    this.code = problem.code;
    this.title = problem.title;
    this.detail = problem.detail;
    this.type = problem.type;
    this.instance = problem.instance;
    this.requestId = problem.request_id;
    this.errors = problem.errors ?? [];
    this.retryAfter = parseRetryAfter(headers.get('retry-after'));
    this.rateLimit = parseRateLimit(headers);
    this.problem = problem;
    this.headers = headers;
  }
}

export class ContractError extends Error {
  override readonly name = 'ContractError';
  constructor(
    message: string,
    /** The operation (`operationId` of the route contract) whose answer did not fit. */
    readonly operationId: string,
    readonly status: number,
    /** Where the answer departed from the schema; empty when it was not JSON at all. */
    readonly issues: readonly z.core.$ZodIssue[],
    /** The start of the body, for the log. */
    readonly bodyExcerpt: string,
  ) {
    super(message);
  }
}
