import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { neonConfig, Pool, type PoolClient } from '@neondatabase/serverless';
import { drizzle as drizzleNeon } from 'drizzle-orm/neon-serverless';
import { migrate as migrateNeon } from 'drizzle-orm/neon-serverless/migrator';
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import { migrate as migratePglite } from 'drizzle-orm/pglite/migrator';
import ws from 'ws';
import { type DatabaseTimeouts, DEFAULT_DATABASE_TIMEOUTS } from '../config.js';
import { DatabaseUnavailableError } from './errors.js';
import { type LocalWsProxy, startLocalWsProxy } from './local-ws-proxy.js';
import { MIGRATIONS_FOLDER } from './migrations-folder.js';
import { takingTurns } from './pglite-turns.js';

/** Store code is written once against this type; both drivers produce it. */
export type Database = PgDatabase<PgQueryResultHKT>;

export interface DatabaseHandle {
  db: Database;
  driver: 'pglite' | 'postgres';
  /** Applies the migrations not yet applied, from the repository's folder unless another is named (tests of a migration). */
  migrate(migrationsFolder?: string): Promise<void>;
  /** Idempotent: the app closes its database when it closes, and a test may have closed it before (an outage). */
  close(): Promise<void>;
}

/** `close` run at most once; later calls wait for that one. */
export function closingOnce(close: () => Promise<void>): () => Promise<void> {
  let closing: Promise<void> | null = null;
  return () => {
    closing ??= close();
    return closing;
  };
}

/**
 * PGlite runs in this process, one statement at a time, on the event loop: statement_timeout and
 * lock_timeout cannot fire there (no other session holds a lock, and nothing interrupts a running
 * statement). What can stall a request is waiting for its one connection while a transaction holds
 * it: that wait is bounded by `acquireMs` (pglite-turns.ts), as the pool's wait is on a server.
 */
export async function openPglite(
  dir: string,
  timeouts: Pick<DatabaseTimeouts, 'acquireMs'> = DEFAULT_DATABASE_TIMEOUTS,
): Promise<DatabaseHandle> {
  await mkdir(dir, { recursive: true });
  const client = new PGlite(dir, { extensions: { vector } });
  await client.waitReady;
  return pgliteHandle(client, timeouts);
}

/** Without `timeouts`, a caller waits for the connection as long as it takes (tests and benchmarks sharing one in-memory PGlite). */
export function pgliteHandle(client: PGlite, timeouts?: Pick<DatabaseTimeouts, 'acquireMs'>): DatabaseHandle {
  const db = drizzlePglite({ client: timeouts ? takingTurns(client, timeouts.acquireMs) : client });
  return {
    db: db as unknown as Database,
    driver: 'pglite',
    migrate: (migrationsFolder = MIGRATIONS_FOLDER) => migratePglite(db, { migrationsFolder }),
    close: closingOnce(() => client.close()),
  };
}

/**
 * How long after statement_timeout the client stops waiting for a query's answer. The server answers
 * a statement it cancelled within milliseconds; one that says nothing this long after is frozen or
 * cut off, and its connection is closed (`closeOnQueryDeadline`).
 */
export const QUERY_DEADLINE_GRACE_MS = 1_000;

export async function openPostgres(
  url: string,
  options: { localProxy: boolean; maxConnections?: number; timeouts?: DatabaseTimeouts },
): Promise<DatabaseHandle> {
  const proxy = options.localProxy ? await acquireLocalProxy() : null;
  neonConfig.webSocketConstructor = ws;
  if (proxy) {
    neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxy.port}/v1?address=${host}:${port}`;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineTLS = false;
    neonConfig.pipelineConnect = false;
  }
  const timeouts = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS;
  const pool = boundedPool(url, options.maxConnections ?? 10, timeouts, { boundStatements: true });
  const db = drizzleNeon({ client: pool });
  return {
    db: db as unknown as Database,
    driver: 'postgres',
    migrate: async (migrationsFolder = MIGRATIONS_FOLDER) => {
      // A migration may rewrite a large table: its statements run as long as they need, on a pool of
      // their own. Its locks are bounded like everyone's, so an ALTER waiting behind a long transaction
      // fails the start-up rather than queue every replica's queries behind it.
      const migrating = boundedPool(url, 1, timeouts, { boundStatements: false });
      try {
        await migrateNeon(drizzleNeon({ client: migrating }), { migrationsFolder });
      } finally {
        await migrating.end();
      }
    },
    close: closingOnce(async () => {
      await pool.end();
      if (proxy) await releaseLocalProxy();
    }),
  };
}

/**
 * A pool whose every wait is bounded: for a free connection or a new one (`acquireMs`), for a lock
 * (lock_timeout), and, with `boundStatements`, for a statement (statement_timeout on the server, and
 * the client's own deadline shortly after, for a server that does not answer at all).
 */
function boundedPool(url: string, max: number, timeouts: DatabaseTimeouts, options: { boundStatements: boolean }): Pool {
  const pool = new Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: timeouts.acquireMs,
    lock_timeout: timeouts.lockMs,
    ...(options.boundStatements
      ? { statement_timeout: timeouts.statementMs, query_timeout: timeouts.statementMs + QUERY_DEADLINE_GRACE_MS }
      : {}),
  });
  // An idle connection dropped by the server must not crash the process; the pool reconnects.
  pool.on('error', () => {});
  pool.on('connect', (client: PoolClient) => {
    // Nor one dropped while checked out (a transaction between two queries, a restart of the server): the
    // pool listens only to idle clients, so such a client would emit 'error' to nobody and end the process.
    // Its queries fail on their own, and the pool discards it on release because it is no longer queryable.
    client.on('error', () => {});
    closeOnQueryDeadline(client);
  });
  releaseTransactionsOnClose(pool);
  return pool;
}

/** What a checked-out client closed by `closeOnQueryDeadline` calls to give its slot back at once. */
const RELEASE_ON_CLOSE = Symbol('releaseOnClose');
type TrackedClient = PoolClient & { [RELEASE_ON_CLOSE]?: () => void };

/**
 * drizzle's transaction takes a client with `pool.connect()` and sends BEGIN before its try/finally:
 * a BEGIN that fails (the server gone, or past its deadline) never releases the client, and the
 * pool keeps counting it, one slot lost for good each time, until no request gets a connection.
 * A client taken that way is therefore released when its connection closes, and its holder's own
 * release, if it comes, does nothing. (The pool's own `query` takes clients with a callback and
 * always releases them.)
 */
function releaseTransactionsOnClose(pool: Pool): void {
  const connect = pool.connect.bind(pool) as (callback?: unknown) => Promise<PoolClient> | undefined;
  (pool as { connect: unknown }).connect = (callback?: unknown) => {
    if (callback !== undefined) return connect(callback);
    return connect()!.then((client: TrackedClient) => {
      const release = client.release;
      let released = false;
      const releaseOnce = (error?: Error | boolean) => {
        if (released) return;
        released = true;
        client.off('end', closed);
        delete client[RELEASE_ON_CLOSE];
        release(error);
      };
      const closed = () => releaseOnce(new Error('the connection closed while checked out'));
      client.once('end', closed);
      client.release = releaseOnce;
      client[RELEASE_ON_CLOSE] = closed;
      return client;
    });
  };
}

/** node-postgres's error for a query whose query_timeout passed. */
const QUERY_DEADLINE_MESSAGE = 'Query read timeout';

/**
 * node-postgres rejects a query past its query_timeout but keeps the connection, still waiting for
 * that answer: every later query on it (a transaction's ROLLBACK, the next request's, once the pool
 * takes it back) would queue behind it and wait out a deadline of its own. The connection is closed
 * instead (its socket destroyed, which node-postgres does for a client ended mid-query), so the pool
 * replaces it and the server, once it answers again, serves a fresh one. Later queries on the closed
 * client fail at once, saying why.
 */
function closeOnQueryDeadline(client: PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  let closed = false;
  const closeIfOverran = (error: unknown) => {
    if (closed || (error as Error | undefined)?.message !== QUERY_DEADLINE_MESSAGE) return;
    closed = true;
    // The pool's client type leaves `end` out; every pooled client is a full Client.
    (client as unknown as { end(): Promise<void> }).end().catch(() => {});
    // Its socket may take a while to report closed (a WebSocket's closing handshake): the slot is free now.
    (client as TrackedClient)[RELEASE_ON_CLOSE]?.();
  };
  const afterDeadline = () =>
    new DatabaseUnavailableError('The connection was closed: a query on it passed its deadline.', { reason: 'query_deadline' });
  // Both forms the drivers use: a trailing callback (the pool's own query), or a promise (drizzle's).
  (client as { query: unknown }).query = (...args: unknown[]) => {
    const callback = args.at(-1);
    if (typeof callback === 'function') {
      if (closed) {
        queueMicrotask(() => callback(afterDeadline()));
        return undefined;
      }
      args[args.length - 1] = (error: unknown, result: unknown) => {
        closeIfOverran(error);
        callback(error, result);
      };
      return query(...args);
    }
    if (closed) return Promise.reject(afterDeadline());
    const result = query(...args);
    if (!(result instanceof Promise)) return result;
    return result.catch((error: unknown) => {
      closeIfOverran(error);
      throw error;
    });
  };
}

// neonConfig is process-wide, so every Postgres handle of a process shares one proxy.
let sharedProxy: { proxy: Promise<LocalWsProxy>; users: number } | null = null;

async function acquireLocalProxy(): Promise<LocalWsProxy> {
  sharedProxy ??= { proxy: startLocalWsProxy(), users: 0 };
  sharedProxy.users++;
  return sharedProxy.proxy;
}

async function releaseLocalProxy(): Promise<void> {
  if (!sharedProxy || --sharedProxy.users > 0) return;
  const { proxy } = sharedProxy;
  sharedProxy = null;
  await (await proxy).close();
}

/** The database or an open transaction on it: store functions accept either. */
export type Executor = Database | Parameters<Parameters<Database['transaction']>[0]>[0];
