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
import { type LocalWsProxy, startLocalWsProxy } from './local-ws-proxy.js';
import { MIGRATIONS_FOLDER } from './migrations-folder.js';

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

export async function openPglite(dir: string): Promise<DatabaseHandle> {
  await mkdir(dir, { recursive: true });
  const client = new PGlite(dir, { extensions: { vector } });
  await client.waitReady;
  return pgliteHandle(client);
}

export function pgliteHandle(client: PGlite): DatabaseHandle {
  const db = drizzlePglite({ client });
  return {
    db: db as unknown as Database,
    driver: 'pglite',
    migrate: (migrationsFolder = MIGRATIONS_FOLDER) => migratePglite(db, { migrationsFolder }),
    close: closingOnce(() => client.close()),
  };
}

export async function openPostgres(url: string, options: { localProxy: boolean; maxConnections?: number }): Promise<DatabaseHandle> {
  const proxy = options.localProxy ? await acquireLocalProxy() : null;
  neonConfig.webSocketConstructor = ws;
  if (proxy) {
    neonConfig.wsProxy = (host, port) => `127.0.0.1:${proxy.port}/v1?address=${host}:${port}`;
    neonConfig.useSecureWebSocket = false;
    neonConfig.pipelineTLS = false;
    neonConfig.pipelineConnect = false;
  }
  const pool = new Pool({ connectionString: url, max: options.maxConnections ?? 10 });
  // An idle connection dropped by the server must not crash the process; the pool reconnects.
  pool.on('error', () => {});
  // Nor one dropped while checked out (a transaction between two queries, a restart of the server): the
  // pool listens only to idle clients, so such a client would emit 'error' to nobody and end the process.
  // Its queries fail on their own, and the pool discards it on release because it is no longer queryable.
  pool.on('connect', (client: PoolClient) => client.on('error', () => {}));
  const db = drizzleNeon({ client: pool });
  return {
    db: db as unknown as Database,
    driver: 'postgres',
    migrate: (migrationsFolder = MIGRATIONS_FOLDER) => migrateNeon(db, { migrationsFolder }),
    close: closingOnce(async () => {
      await pool.end();
      if (proxy) await releaseLocalProxy();
    }),
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
