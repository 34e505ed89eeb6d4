import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Run twice by the root config: on PGlite and, when TEST_DATABASE_URL is set, on a Postgres server.
export default defineConfig({
  test: {
    // The root config extends this file inline; pin the root so `include` stays relative to origin/.
    root: fileURLToPath(new URL('.', import.meta.url)),
    name: 'origin',
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // PGlite and the ONNX runtime are heavy to start: share workers across files, two at most.
    maxWorkers: 2,
  },
});
