import { defineConfig } from 'vitest/config';
import { crossProjects } from './test/vitest.projects.js';

/**
 * `npm test` runs every project: shared-schema units, the offline tools' tests, the origin on PGlite, the origin again on a
 * Postgres server when TEST_DATABASE_URL is set, the Worker inside workerd (as Variant A, and again
 * deployed as Variant B), and the tests in test/, one project per folder (`cross:e2e`,
 * `cross:architecture`, `cross:security`, …: test/vitest.projects.ts), most of them with both planes
 * started as `npm start` starts them.
 */
const onPostgres = process.env.TEST_DATABASE_URL
  ? [
      {
        extends: './origin/vitest.config.ts',
        test: { name: 'origin:postgres', env: { TEST_DB_DRIVER: 'postgres' }, sequence: { groupOrder: 2 } },
      },
    ]
  : [];

/**
 * Each project runs as its own group (`sequence.groupOrder`, also set in the projects' own configs),
 * one after another: the suites are CPU-heavy and CI has two cores.
 */
const inGroup = (groupOrder: number) => ({ sequence: { groupOrder } });

export default defineConfig({
  test: {
    globalSetup: ['test/build-pages.global-setup.ts'],
    // Workers and planes log a line per request: printed for failing tests only.
    silent: 'passed-only',
    projects: [
      'shared-schema/vitest.config.ts',
      'tools/vitest.config.ts',
      { extends: './origin/vitest.config.ts', test: { name: 'origin:pglite', env: { TEST_DB_DRIVER: 'pglite' }, ...inGroup(1) } },
      ...onPostgres,
      'edge-gate/vitest.config.ts',
      'edge-gate/vitest.variant-b.config.ts',
      ...crossProjects,
    ],
  },
});
