import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { asProblem } from '../http/problems.js';
import { DatabaseUnavailableError, databaseFailure, isDatabaseUnavailable, serializeError } from './errors.js';

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

  it('names each timeout: the server cancelling a statement or a lock wait, the client giving up on a query or a connection', () => {
    const cases: [unknown, string][] = [
      [new DrizzleQueryError('select 1', [], pgError('57014', 'canceling statement due to statement timeout')), 'statement_timeout'],
      [new DrizzleQueryError('select 1', [], pgError('55P03', 'canceling statement due to lock timeout')), 'lock_timeout'],
      [new DrizzleQueryError('select 1', [], new Error('Query read timeout')), 'query_deadline'],
      [new Error('timeout exceeded when trying to connect'), 'acquire_timeout'],
      [new Error('Connection terminated due to connection timeout', { cause: new Error('timeout expired') }), 'acquire_timeout'],
      [new DatabaseUnavailableError('not free', { reason: 'acquire_timeout' }), 'acquire_timeout'],
      // A readiness check's own error, caused by a lock wait: the specific reason wins.
      [new DatabaseUnavailableError('no answer', { cause: pgError('55P03', 'lock timeout') }), 'lock_timeout'],
      [new DrizzleQueryError('select 1', [], new Error('Connection terminated unexpectedly')), 'unreachable'],
      [new DatabaseUnavailableError(), 'unreachable'],
    ];
    for (const [error, reason] of cases) expect(databaseFailure(error), String(error)).toBe(reason);
    expect(databaseFailure(pgError('23505', 'duplicate key'))).toBeNull();
    // Other SQLSTATEs of the same classes are not timeouts: a deadlock, a serialization failure.
    expect(databaseFailure(pgError('40P01', 'deadlock detected'))).toBeNull();
  });

  it('answers 503 unavailable with Retry-After for every timeout, saying only that the database did not answer in time', () => {
    for (const cause of [
      pgError('57014', 'canceling statement due to statement timeout'),
      pgError('55P03', 'canceling statement due to lock timeout'),
      new Error('Query read timeout'),
      new Error('timeout exceeded when trying to connect'),
    ]) {
      const problem = asProblem(new DrizzleQueryError('select * from licenses where id = $1', ['secret-id'], cause));
      expect(problem, cause.message).toMatchObject({ status: 503, code: 'unavailable', headers: { 'retry-after': '1' } });
      expect(problem.message).toBe('The database did not answer in time; try again shortly.');
    }
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
