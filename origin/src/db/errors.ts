/**
 * Database failures, as requests and logs should see them.
 *
 * The Postgres server going away (a restart, a failover, Neon scaling to zero) is not a bug of the
 * request that met it: such a request answers 503 `unavailable` with Retry-After, and the pool opens
 * new connections once the server is back (test/faults/postgres-restart.test.ts). Nor is waiting too
 * long for it: a statement past statement_timeout, a lock not granted within lock_timeout, a server
 * that stopped answering, or no connection free in time (docs/OPERATIONS.md#database-timeouts;
 * test/faults/database-stalls.test.ts) answers the same, so no request hangs and no connection stays held.
 */

import { DrizzleQueryError } from 'drizzle-orm/errors';

/**
 * Why a request could not use the database, each a condition that passes by itself:
 * - `unreachable`: the server could not be reached, or ended the connection;
 * - `statement_timeout`: the server cancelled a statement that ran too long (SQLSTATE 57014);
 * - `lock_timeout`: a lock held by another transaction was not granted in time (SQLSTATE 55P03);
 * - `query_deadline`: the server did not answer a query at all in time (frozen, or the network to it);
 * - `acquire_timeout`: no connection was free, or could be opened, in time.
 */
export const DATABASE_FAILURES = ['unreachable', 'statement_timeout', 'lock_timeout', 'query_deadline', 'acquire_timeout'] as const;
export type DatabaseFailure = (typeof DATABASE_FAILURES)[number];

/** Thrown where a store rewrites the driver's error (to keep values out of it) but the cause was an outage; `reason` keeps why. */
export class DatabaseUnavailableError extends Error {
  readonly reason: DatabaseFailure;
  constructor(message = 'The database is unavailable.', options?: ErrorOptions & { reason?: DatabaseFailure }) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
    this.reason = options?.reason ?? 'unreachable';
  }
}

/** SQLSTATE class 08 (connection exception), and the server shutting down, crashed or starting up. */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/;
/** query_canceled (statement_timeout, or pg_cancel_backend) and lock_not_available (lock_timeout). */
const TIMEOUT_SQLSTATES: Partial<Record<string, DatabaseFailure>> = { '57014': 'statement_timeout', '55P03': 'lock_timeout' };
/** The socket to the server (or to the WebSocket relay in front of it) could not be used. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/**
 * node-postgres (inside the Neon driver) reports its own timeouts and a dropped connection by message
 * only: query_timeout passed, the pool's wait for a connection (connectionTimeoutMillis) passed,
 * a new connection not ready within it. The specific ones come first.
 */
const DRIVER_MESSAGES: [RegExp, DatabaseFailure][] = [
  [/^Query read timeout$/, 'query_deadline'],
  [/^timeout exceeded when trying to connect$/, 'acquire_timeout'],
  [/^Connection terminated due to connection timeout$/, 'acquire_timeout'],
  [/^Connection terminated/, 'unreachable'],
  [/is not queryable$/, 'unreachable'],
];

/**
 * Why `error`, or any error it was caused by, says the database could not serve the request in time,
 * or null when it is some other failure. The most specific reason in the chain wins: a readiness
 * check's DatabaseUnavailableError caused by a lock timeout is a `lock_timeout`.
 * A socket error code alone says nothing about which socket: an HTTP client hanging up mid-request
 * is an ECONNRESET too. It counts only as the cause of a failed query, or from opening a connection
 * (the pool connecting for a transaction; the server side of a request never connects).
 */
export function databaseFailure(error: unknown): DatabaseFailure | null {
  let found: DatabaseFailure | null = null;
  let underQuery = false;
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    let reason: DatabaseFailure | null = null;
    if (current instanceof DatabaseUnavailableError) reason = current.reason;
    underQuery ||= current instanceof DrizzleQueryError;
    const { code, message, syscall } = current as { code?: unknown; message?: unknown; syscall?: unknown };
    if (typeof code === 'string') {
      if (TIMEOUT_SQLSTATES[code]) reason = TIMEOUT_SQLSTATES[code];
      else if (UNAVAILABLE_SQLSTATE.test(code)) reason = 'unreachable';
      else if (NETWORK_CODES.has(code) && (underQuery || syscall === 'connect')) reason = 'unreachable';
    }
    if (typeof message === 'string') reason ??= DRIVER_MESSAGES.find(([pattern]) => pattern.test(message))?.[1] ?? null;
    if (reason && reason !== 'unreachable') return reason;
    found ??= reason;
  }
  return found;
}

/** Whether the database could not serve the request in time (any `DatabaseFailure`): 503, and the request may be sent again. */
export const isDatabaseUnavailable = (error: unknown): boolean => databaseFailure(error) !== null;

/**
 * The error as a log line may carry it. drizzle's query errors quote every parameter of the failed
 * statement in their message and stack (webhook secrets, token hashes, emails): those keep the SQL,
 * which holds only placeholders, and the database's own error, and drop the parameters.
 */
export function serializeError(error: unknown, depth = 0): { type: string; message: string; stack: string; [key: string]: unknown } {
  if (!(error instanceof Error)) return { type: typeof error, message: String(error), stack: '' };
  const { code, query, params, cause } = error as Error & { code?: unknown; query?: unknown; params?: unknown; cause?: unknown };
  const carriesParameters = typeof query === 'string' && params !== undefined;
  const message = carriesParameters ? `Failed query: ${query}` : error.message;
  const type = error.constructor.name === 'Error' ? error.name : error.constructor.name;
  return {
    type,
    message,
    stack: carriesParameters ? `${type}: ${message}\n${stackFrames(error.stack)}` : (error.stack ?? ''),
    ...(typeof code === 'string' ? { code } : {}),
    ...(cause !== undefined && depth < 3 ? { cause: serializeError(cause, depth + 1) } : {}),
  };
}

/** The "at …" lines of a stack, without the message lines above them. */
const stackFrames = (stack: string | undefined): string =>
  (stack ?? '')
    .split('\n')
    .filter((line) => /^\s+at /.test(line))
    .join('\n');
