import { randomBytes } from 'node:crypto';
import { readdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { sha256Hex } from '@vip/shared-schema';
import { sql } from 'drizzle-orm';
import type { DatabaseTimeouts } from '../config.js';
import { closingOnce, type DatabaseHandle, openPostgres, pgliteHandle } from '../db/client.js';
import { MIGRATIONS_FOLDER } from '../db/migrations-folder.js';

/**
 * A migrated database of its own for one test file, on the driver the vitest project chose:
 * in-memory PGlite, or a fresh database on the server named by TEST_DATABASE_URL (through the Neon
 * driver and the local WebSocket proxy), dropped again on close.
 */
/** `timeouts`: bound waiting for the database as a configured origin does; unset, PGlite's waits are unbounded and a server's take the defaults. */
export async function openTestDatabase(options: { migrationsFolder?: string; timeouts?: DatabaseTimeouts } = {}): Promise<DatabaseHandle> {
  const { migrationsFolder, timeouts } = options;
  const driver = process.env.TEST_DB_DRIVER ?? 'pglite';
  if (driver === 'pglite') {
    // The saved image holds every migration: a test of an earlier state starts from initdb.
    const image = migrationsFolder ? undefined : await migratedPgliteImage();
    const handle = pgliteHandle(new PGlite({ extensions: { vector }, loadDataDir: image }), timeouts);
    await handle.migrate(migrationsFolder);
    return handle;
  }
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (driver !== 'postgres' || !serverUrl) throw new Error('TEST_DB_DRIVER=postgres needs TEST_DATABASE_URL (postgres://…/db)');
  return openScratchServerDatabase(serverUrl, 'vip_t', migrationsFolder, timeouts);
}

/** Creating and dropping a database waits for a checkpoint, which on a busy machine may take longer than any request should. */
const SCRATCH_ADMIN_TIMEOUTS: DatabaseTimeouts = { statementMs: 120_000, lockMs: 120_000, acquireMs: 120_000 };

/** A fresh database on the Postgres server at `serverUrl`, migrated (from `migrationsFolder` if named), dropped again on close. */
export async function openScratchServerDatabase(
  serverUrl: string,
  namePrefix: string,
  migrationsFolder?: string,
  timeouts?: DatabaseTimeouts,
): Promise<DatabaseHandle> {
  const scratch = await createScratchServerDatabase(serverUrl, namePrefix);
  const handle = await openPostgres(scratch.url, { localProxy: true, maxConnections: 4, timeouts });
  await handle.migrate(migrationsFolder);
  return {
    ...handle,
    close: closingOnce(async () => {
      await handle.close();
      await scratch.drop();
    }),
  };
}

/**
 * An empty database of its own on the Postgres server at `serverUrl` (named `namePrefix_<random>`),
 * for whatever connects to `url` (an origin process); `drop` removes it, connections and all.
 */
export async function createScratchServerDatabase(
  serverUrl: string,
  namePrefix: string,
): Promise<{ url: string; drop: () => Promise<void> }> {
  const admin = await openPostgres(serverUrl, { localProxy: true, maxConnections: 1, timeouts: SCRATCH_ADMIN_TIMEOUTS });
  const name = `${namePrefix}_${randomBytes(6).toString('hex')}`;
  await admin.db.execute(sql.raw(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: closingOnce(async () => {
      await admin.db.execute(sql.raw(`drop database if exists ${name} with (force)`));
      await admin.close();
    }),
  };
}

/**
 * PGlite's initdb takes seconds; loading a saved data directory takes a fraction of that. The image
 * of a freshly migrated database is kept in the temp folder, keyed by the migrations and the PGlite
 * version, so only the first test file after a change pays for initdb.
 */
async function migratedPgliteImage(): Promise<Blob> {
  const file = join(tmpdir(), `vip-origin-pglite-${(await imageKey()).slice(0, 16)}.tar`);
  try {
    return new Blob([await readFile(file)]);
  } catch {
    const client = new PGlite({ extensions: { vector } });
    await pgliteHandle(client).migrate();
    const image = await client.dumpDataDir('none');
    await client.close();
    // Written aside and renamed, so a parallel worker never reads half an image.
    const partial = `${file}.${process.pid}.partial`;
    await writeFile(partial, new Uint8Array(await image.arrayBuffer()));
    await rename(partial, file);
    return image;
  }
}

async function imageKey(): Promise<string> {
  const names = (await readdir(MIGRATIONS_FOLDER)).filter((name) => name.endsWith('.sql')).sort();
  const contents = await Promise.all(names.map((name) => readFile(join(MIGRATIONS_FOLDER, name), 'utf8')));
  // The package does not export its package.json; find it beside the entry point.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const packageJson = await readFile(join(entry.slice(0, entry.lastIndexOf('/dist/')), 'package.json'), 'utf8');
  const pgliteVersion = (JSON.parse(packageJson) as { version: string }).version;
  return sha256Hex([pgliteVersion, ...names, ...contents].join('\0'));
}
