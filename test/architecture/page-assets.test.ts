import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { PAGE_BUNDLES, renderPageBundle } from '../../scripts/build-pages.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

describe('page assets', () => {
  it.each(PAGE_BUNDLES.map((bundle) => [bundle.output, bundle] as const))(
    '%s is what `npm run pages:build` makes of the sources now',
    async (output, bundle) => {
      const committed = readFileSync(join(root, output), 'utf8');
      expect(committed === (await renderPageBundle(bundle)), `${output} is stale: run npm run pages:build`).toBe(true);
    },
  );
});
