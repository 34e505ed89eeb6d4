import { config } from 'zod';

/**
 * zod compiles its object parsers with `new Function` when it may, and finds out whether it may by
 * trying once. The pages' policy (pages.ts) allows no eval and requires Trusted Types, so that one
 * try is reported as a violation ("This document requires 'TrustedScript' assignment") on every
 * page load, although zod then falls back. Jitless mode skips the try, and the parsers run as they
 * would have after it. A page script imports this module before anything that builds a schema:
 * zod reads the setting when each schema is built.
 */
config({ jitless: true });
