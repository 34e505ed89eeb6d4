import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { asProblem } from '../http/problems.js';
import { DatabaseUnavailableError, isDatabaseUnavailable, serializeError } from './errors.js';

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });
const socketError = (code: string, syscall: string) => Object.assign(new Error(`${syscall} ${code}`), { code, syscall });

describe('database failures', () => {
  it('recognises the server going away, directly or as the cause of a query error', () => {
    for (const error of [
      pgError('57P01', 'terminating connection due to administrator command'),
      pgError('57P03', 'the database system is starting up'),
      pgError('08006', 'connection failure'),
      socketError('ECONNREFUSED', 'connect'),
      socketError('ETIMEDOUT', 'connect'),
      new DrizzleQueryError('select 1', [], socketError('ECONNRESET', 'read')),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
      new DatabaseUnavailableError(),
      new DrizzleQueryError('select 1', [], pgError('57P01', 'terminating connection due to administrator command')),
    ]) {
      expect(isDatabaseUnavailable(error), String(error)).toBe(true);
    }
  });

  it('leaves other failures alone', () => {
    for (const error of [
      pgError('23505', 'duplicate key value violates unique constraint "users_email_unique"'),
      new DrizzleQueryError('insert into t values ($1)', ['x'], pgError('22P02', 'invalid input syntax')),
      // An HTTP client hanging up mid-request: Node's request stream says so with ECONNRESET.
      pgError('ECONNRESET', 'aborted'),
      socketError('ECONNRESET', 'read'),
      socketError('EPIPE', 'write'),
      new Error('boom'),
      null,
    ]) {
      expect(isDatabaseUnavailable(error)).toBe(false);
    }
  });

  it('answers 503 unavailable with Retry-After, whatever the driver said', () => {
    const problem = asProblem(new DrizzleQueryError('select 1', [], new Error('Connection terminated unexpectedly')));
    expect(problem).toMatchObject({ status: 503, code: 'unavailable', headers: { 'retry-after': '1' } });
    expect(problem.message).not.toMatch(/select|terminated/);
  });

  it('logs a failed query with its SQL and the database error, never its parameters', () => {
    const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';
    const error = new DrizzleQueryError(
      'insert into webhook_endpoints (id, secret) values ($1, $2)',
      ['id-1', secret],
      pgError('57P01', 'terminating connection'),
    );
    const logged = serializeError(error);
    expect(JSON.stringify(logged)).not.toContain(secret);
    expect(logged).toMatchObject({
      type: 'DrizzleQueryError',
      message: 'Failed query: insert into webhook_endpoints (id, secret) values ($1, $2)',
      cause: { code: '57P01', message: 'terminating connection' },
    });
    expect(logged.stack).toMatch(/^DrizzleQueryError: Failed query: insert[^\n]*\n\s+at /);
  });
});
