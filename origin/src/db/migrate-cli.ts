import { loadConfig } from '../config.js';
import { openConfiguredDatabase } from './open.js';

/** `npm run db:migrate`: applies pending migrations to the configured database and exits. */
const config = loadConfig(process.env);
const handle = await openConfiguredDatabase(config.database);
try {
  await handle.migrate();
  console.log(`migrations applied (${handle.driver})`);
} finally {
  await handle.close();
}
