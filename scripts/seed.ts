/**
 * `npm run seed`: a demo registry on the running service (`npm start`; `npm start -- --demo` seeds it
 * itself once both planes serve). Creates, or finds from an earlier run, a platform with an API key,
 * a voice owner, a voice enrolled from the speech committed under fixtures/ with its spoken consent,
 * its synthesis consent and a licence for the platform, then prints commands that reach each gate outcome and a
 * redemption. Everything goes through the public API, as an integrator's own code would.
 *
 * It runs as the admin (ADMIN_EMAIL / ADMIN_PASSWORD, else the demo admin `npm start -- --demo`
 * created; `--demo` on a data folder whose admin a plain start created signs it in with the origin's key) and keeps the demo owner's password and the API key in DATA_DIR/demo.json (mode 0600),
 * so a second run reuses them. It refuses a service or a database (DATABASE_URL) that is not on this
 * machine unless given `--allow-remote`.
 *
 * The entry point only: the seed itself is launch/demo-seed.ts.
 */
import { parseArgs } from 'node:util';
import { demoInstructions, seedDemo, seedOptionsFrom } from '../launch/demo-seed.js';

const { values } = parseArgs({ options: { 'allow-remote': { type: 'boolean', default: false } } });
seedDemo(seedOptionsFrom(process.env, values['allow-remote']))
  .then((seed) => console.log(demoInstructions(seed)))
  .catch((error: unknown) => {
    console.error(`[seed] ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
