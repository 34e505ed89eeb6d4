import { defineConfig } from 'vitest/config';

/**
 * `npm test` runs every project: shared-schema units, the origin on PGlite, the origin again on a
 * Postgres server when TEST_DATABASE_URL is set, the Worker inside workerd, and the cross-plane
 * tests with both planes started as `npm start` starts them.
 */
const onPostgres = process.env.TEST_DATABASE_URL
  ? [{ extends: './origin/vitest.config.ts', test: { name: 'origin:postgres', env: { TEST_DB_DRIVER: 'postgres' } } }]
  : [];

export default defineConfig({
  test: {
    projects: [
      'shared-schema/vitest.config.ts',
      { extends: './origin/vitest.config.ts', test: { name: 'origin:pglite', env: { TEST_DB_DRIVER: 'pglite' } } },
      ...onPostgres,
      'edge-gate/vitest.config.ts',
      'test/vitest.config.ts',
    ],
  },
});
