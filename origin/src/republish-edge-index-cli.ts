import { loadConfig } from './config.js';
import { openConfiguredDatabase } from './db/open.js';
import { republishApiKeys } from './platforms/index.js';
import { republishVoicesToEdgeIndex } from './registry/index.js';

/**
 * `npm run edge:republish`: queues every voice's and every API key's current record for the edge
 * index again, against the configured database (docs/OPERATIONS.md, "Republishing the edge index").
 * The origin's outbox sender delivers them: at once when it runs beside a live origin on Postgres, at
 * the next `npm start` on the embedded database, which admits one process at a time.
 */
const config = loadConfig(process.env);
const handle = await openConfiguredDatabase(config.database);
try {
  const now = new Date();
  const voices = await republishVoicesToEdgeIndex(handle.db, now);
  const apiKeys = await republishApiKeys(handle.db, now);
  console.log(`queued for the edge index: ${voices} voices, ${apiKeys} API keys (the origin's outbox sender delivers them)`);
} finally {
  await handle.close();
}
