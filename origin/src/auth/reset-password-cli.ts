import { text } from 'node:stream/consumers';
import { loadConfig } from '../config.js';
import { openConfiguredDatabase } from '../db/open.js';
import { systemRuntime } from '../runtime.js';
import { scryptHasher } from './passwords.js';
import { resetPassword } from './reset-password.js';

/** `npm run account:reset-password -- --email <address> [--password-stdin]`, against the configured database. */
const config = loadConfig(process.env);
const handle = await openConfiguredDatabase(config.database);
try {
  process.exitCode = await resetPassword(
    process.argv.slice(2),
    { db: handle.db, hasher: scryptHasher(), runtime: systemRuntime },
    { readStdin: () => text(process.stdin), out: (line) => console.log(line), err: (line) => console.error(line) },
  );
} finally {
  await handle.close();
}
