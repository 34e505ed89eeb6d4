/** `npm run pages:build`: every page bundle built now (launch/page-bundles.ts says what they are and who else builds them). */
import { buildPages } from '../launch/page-bundles.js';

const started = performance.now();
for (const { output, bytes } of await buildPages()) console.log(`${output}: ${(bytes / 1024).toFixed(1)} KiB`);
console.log(`built in ${Math.round(performance.now() - started)} ms`);
