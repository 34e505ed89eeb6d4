import { defineConfig } from 'vitest/config';

// Cross-plane tests start both planes as real processes, so they run one file at a time.
export default defineConfig({
  test: {
    name: 'e2e',
    sequence: { groupOrder: 5 },
    include: ['**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
