import { buildPages } from '../launch/page-bundles.js';

/**
 * Before any project of `npm test` starts: the planes and the Worker bundle import the pages'
 * bundles, which are build output (launch/page-bundles.ts), so they are built from the sources of
 * this checkout every run.
 */
export async function setup(): Promise<void> {
  await buildPages();
}
