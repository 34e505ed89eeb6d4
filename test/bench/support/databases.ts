import { cpus, loadavg } from 'node:os';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { type DatabaseHandle, pgliteHandle } from '../../../origin/src/db/client.js';
import { openScratchServerDatabase } from '../../../origin/src/testing/database.js';

export interface DatabaseTarget {
  key: string;
  label: string;
  open: () => Promise<DatabaseHandle>;
}

export async function openPglite(): Promise<DatabaseHandle> {
  const handle = pgliteHandle(new PGlite({ extensions: { vector } }));
  await handle.migrate();
  return handle;
}

/** PGlite in-memory, and a scratch database on Postgres when TEST_DATABASE_URL names a server; `notes` says when it does not. */
export function databaseTargets(notes: string[]): DatabaseTarget[] {
  const targets: DatabaseTarget[] = [{ key: 'pglite', label: 'PGlite', open: openPglite }];
  const serverUrl = process.env.TEST_DATABASE_URL;
  if (serverUrl) targets.push({ key: 'postgres', label: 'Postgres', open: () => openScratchServerDatabase(serverUrl, 'vip_bench') });
  else notes.push('Postgres skipped: TEST_DATABASE_URL is not set.');
  return targets;
}

/** Wall-clock rates on the shared machine scale with its load: each report says what it was. */
export const loadNote = () =>
  `Load average at the start: ${loadavg()[0]!.toFixed(1)} on ${cpus().length} cores; wall-clock rates on a shared machine scale with it.`;
