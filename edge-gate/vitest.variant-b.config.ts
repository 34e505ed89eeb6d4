import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { configDefaults, defineConfig } from 'vitest/config';
import { TEST_BINDINGS } from './vitest.config.js';

/**
 * The same Worker deployed as Variant B (docs/CONTRACT.md#answers-to-the-specifications-gaps: a deployment setting), so the
 * conformance tests go through SELF.fetch into workerd exactly as a Variant B caller would.
 */
export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: '../wrangler.toml' },
      miniflare: { cf: false, bindings: { ...TEST_BINDINGS, GATE_VARIANT: 'B' } },
    }),
  ],
  test: {
    name: 'edge-gate:variant-b',
    sequence: { groupOrder: 4 },
    include: ['test/variant-b/**/*.test.ts'],
    exclude: configDefaults.exclude,
    testTimeout: 60_000,
    silent: 'passed-only',
  },
});
