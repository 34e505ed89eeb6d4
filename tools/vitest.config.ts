import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// The offline tools' own tests (the training recipe's CPU smoke test): light on the CPU beside the
// contract's units, so they run in the same first group.
export default defineConfig({
  test: {
    root: fileURLToPath(new URL('.', import.meta.url)),
    name: 'tools',
    include: ['**/*.test.ts'],
    exclude: ['**/node_modules/**', 'voiceprint-training/work/**', 'voiceprint-training/gpu-data/**'],
    testTimeout: 30_000,
    sequence: { groupOrder: 0 },
  },
});
