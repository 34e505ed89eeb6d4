import type { OriginConfig } from '../config.js';
import { type DatabaseHandle, openPglite, openPostgres } from './client.js';

export function openConfiguredDatabase(database: OriginConfig['database']): Promise<DatabaseHandle> {
  return database.kind === 'pglite'
    ? openPglite(database.dir, database.timeouts)
    : openPostgres(database.url, { localProxy: database.localProxy, timeouts: database.timeouts });
}
