/**
 * `npm start`: the whole service on its embedded defaults. Generates and persists what a first
 * start needs (JWT signing keys, the origin-edge internal secret) under DATA_DIR, then runs the
 * origin (Fastify on PGlite unless DATABASE_URL is set) and the edge Worker (wrangler dev, workerd)
 * wired to each other. Ctrl-C stops both.
 *
 * `npm start -- --replicas N` runs N origin replicas instead of one, as production does: all on the
 * one Postgres server DATABASE_URL names (required: PGlite is a single process's database), all with
 * the keys and secrets of DATA_DIR (generated once, before any replica starts), the migrations applied
 * once before them, each on its own port (ORIGIN_PORT+1 … ORIGIN_PORT+N) behind a round-robin front
 * on ORIGIN_PORT (launch/origin-front.ts) that the edge and every caller use. A replica that exits
 * leaves the others serving; Ctrl-C stops them all.
 *
 * `npm start -- --demo` also seeds a demo registry once both serve (launch/demo-seed.ts) and prints the
 * commands that reach each gate outcome. Without ADMIN_PASSWORD it gives a new admin account a
 * password it keeps in DATA_DIR/demo.json, so that the seed (and you) can log in as that admin; an
 * admin a plain start created already is signed in with the origin's key in DATA_DIR (`demoAdmin`).
 *
 * The entry point only: how the planes start is launch/planes.ts.
 */
import { startService } from '../launch/planes.js';

startService().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
