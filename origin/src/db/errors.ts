/**
 * Database failures, as requests and logs should see them.
 *
 * The Postgres server going away (a restart, a failover, Neon scaling to zero) is not a bug of the
 * request that met it: such a request answers 503 `unavailable` with Retry-After, and the pool opens
 * new connections once the server is back (test/faults/postgres-restart.test.ts).
 */

import { DrizzleQueryError } from 'drizzle-orm/errors';

/** Thrown where a store rewrites the driver's error (to keep values out of it) but the cause was an outage. */
export class DatabaseUnavailableError extends Error {
  constructor(message = 'The database is unavailable.', options?: ErrorOptions) {
    super(message, options);
    this.name = 'DatabaseUnavailableError';
  }
}

/** SQLSTATE class 08 (connection exception), and the server shutting down, crashed or starting up. */
const UNAVAILABLE_SQLSTATE = /^(08[0-9A-Z]{3}|57P0[123])$/;
/** The socket to the server (or to the WebSocket relay in front of it) could not be used. */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT']);
/** node-postgres (inside the Neon driver) reports a dropped connection by message only. */
const DRIVER_MESSAGES = [/^Connection terminated/, /is not queryable$/, /^timeout exceeded when trying to connect$/];

/**
 * Whether `error`, or any error it was caused by, says the database server could not be reached.
 * A socket error code alone says nothing about which socket: an HTTP client hanging up mid-request
 * is an ECONNRESET too. It counts only as the cause of a failed query, or from opening a connection
 * (the pool connecting for a transaction; the server side of a request never connects).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  let underQuery = false;
  for (let current = error, depth = 0; current && depth < 5; current = (current as { cause?: unknown }).cause, depth++) {
    if (current instanceof DatabaseUnavailableError) return true;
    underQuery ||= current instanceof DrizzleQueryError;
    const { code, message, syscall } = current as { code?: unknown; message?: unknown; syscall?: unknown };
    if (typeof code === 'string' && UNAVAILABLE_SQLSTATE.test(code)) return true;
    if (typeof code === 'string' && NETWORK_CODES.has(code) && (underQuery || syscall === 'connect')) return true;
    if (typeof message === 'string' && DRIVER_MESSAGES.some((pattern) => pattern.test(message))) return true;
  }
  return false;
}

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
