import { generateKeyPairSync } from 'node:crypto';
import { cloudflareTest } from '@cloudflare/vitest-pool-workers';
import { configDefaults, defineConfig } from 'vitest/config';

/** A fresh signing key per run: tests read the public half from the Worker's own JWKS. */
const authTokenJwk = { ...generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' }), kid: 'edge-test-key' };

export const TEST_BINDINGS = {
  INTERNAL_SECRET: 'internal-secret-used-only-by-tests',
  AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(authTokenJwk),
  ORIGIN_URL: 'https://origin.test',
  LICENSING_URL: 'https://origin.test/licensing',
};

export default defineConfig({
  plugins: [
    cloudflareTest({
      wrangler: { configPath: '../wrangler.toml' },
      miniflare: { cf: false, bindings: TEST_BINDINGS },
    }),
  ],
  // The Worker logs one line per request: shown for failing tests only (when run from edge-gate/).
  // test/variant-b/ runs in its own project with GATE_VARIANT=B (vitest.variant-b.config.ts).
  test: {
    name: 'edge-gate',
    sequence: { groupOrder: 3 },
    include: ['test/**/*.test.ts'],
    exclude: [...configDefaults.exclude, 'test/variant-b/**'],
    testTimeout: 20_000,
    silent: 'passed-only',
  },
});
