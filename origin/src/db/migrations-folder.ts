import { fileURLToPath } from 'node:url';

/** The repository's migrations/ folder, wherever the process was started from. */
export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../../migrations', import.meta.url));
