/**
 * Running both planes on one machine, as `npm start` does (scripts/start.ts, the entry point, has
 * what each flag does): the secrets a first start generates under DATA_DIR, each plane's command and
 * environment (`preparePlanes`), the wait until each serves, and `startService`, the whole start.
 *
 * `preparePlanes` is exported so that tests can start, stop and restart one plane at a time with
 * exactly the command and environment `npm start` uses (test/support/service.ts `startPlanes`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SigningJwk } from '../origin/src/auth/access-tokens.js';
import type { OriginConfig } from '../origin/src/config.js';
import type { Database } from '../origin/src/db/client.js';
import { LOCAL_KEY_FILE, localEncryptionKeys } from '../origin/src/webhooks/secret-encryption.js';
import { freePort, portIsFree } from './free-port.js';
import { type OriginFront, startOriginFront } from './origin-front.js';
import { buildPages } from './page-bundles.js';
import { type PlaneSettings, planeSettings, replicaCount } from './plane-settings.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

type Env = Record<string, string | undefined>;

interface Secrets {
  internal_secret: string;
  /** Signs the origin's access tokens. */
  jwt_private_jwk: Record<string, unknown>;
  /** Signs the edge's single-use authorization tokens. */
  auth_token_private_jwk: Record<string, unknown>;
  /** Signs the audit chain's checkpoints. */
  checkpoint_private_jwk: Record<string, unknown>;
}

/** An Ed25519 private JWK whose kid is its RFC 7638 thumbprint. */
function newSigningJwk(): Record<string, unknown> {
  const jwk = generateKeyPairSync('ed25519').privateKey.export({ format: 'jwk' });
  const thumbprint = createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x }))
    .digest('base64url');
  return { ...jwk, kid: thumbprint, alg: 'EdDSA', use: 'sig' };
}

function writePrivate(path: string, contents: string) {
  writeFileSync(path, contents, { mode: 0o600 });
  chmodSync(path, 0o600);
}

/** Creates what is missing (a data folder from an older version gains its new keys) and keeps the rest. */
function loadOrCreateSecrets(dataDir: string): Secrets {
  const path = join(dataDir, 'secrets.json');
  const existing: Partial<Secrets> = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
  const secrets: Secrets = {
    internal_secret: existing.internal_secret ?? randomBytes(32).toString('base64url'),
    jwt_private_jwk: existing.jwt_private_jwk ?? newSigningJwk(),
    auth_token_private_jwk: existing.auth_token_private_jwk ?? newSigningJwk(),
    checkpoint_private_jwk: existing.checkpoint_private_jwk ?? newSigningJwk(),
  };
  const generated = (Object.keys(secrets) as (keyof Secrets)[]).filter((name) => existing[name] === undefined);
  if (generated.length > 0) {
    writePrivate(path, JSON.stringify(secrets, null, 2));
    console.log(`[start] generated ${generated.join(', ')} in ${path}`);
  }
  return secrets;
}

/** Settings passed through to the planes unchanged when the caller sets them. */
const passThrough = (env: Env, names: string[]) => Object.fromEntries(names.filter((n) => env[n] !== undefined).map((n) => [n, env[n]!]));

/** An origin replica of `--replicas`: `origin-1`, `origin-2`, … */
export type ReplicaName = `origin-${number}`;

/** How one plane is started: the command, its arguments and its whole environment. */
export interface PlaneLaunch {
  name: 'origin' | ReplicaName | 'edge';
  /** Where it serves once started. */
  url: string;
  port: number;
  /** The setting that moves it to another port. */
  portSetting: 'ORIGIN_PORT' | 'EDGE_PORT';
  /** Its `INSTANCE_ID`, new for each launch: the readiness check waits for this one, not whatever answers the port. */
  instance: string;
  command: string;
  args: string[];
  cwd: string;
  env: Env;
}

/** How the planes of one `npm start` are started, wired to each other. */
export interface PlaneLaunches {
  /** Where callers and the edge reach the origin: the origin itself, or the front of its replicas. */
  originUrl: string;
  /** One origin (named `origin`, on the origin port), or the `--replicas` (`origin-1`, … on their own ports). */
  replicas: PlaneLaunch[];
  /** With replicas: the front to run on the origin port before them (launch/origin-front.ts). */
  front: { port: number; replicaPorts: number[] } | null;
  edge: PlaneLaunch;
}

/**
 * Where each plane reaches the other, when not directly (the fault suite puts a link it can cut in
 * between: test/support/link.ts). Callers still use the planes' own addresses.
 */
export interface PlaneReach {
  /** The origin's EDGE_URL: index updates and audit pulls. */
  edgeFromOrigin?: string;
  /** The edge's ORIGIN_URL: the origin's JWKS for Bearer callers. */
  originFromEdge?: string;
}

/** Why the replicas `settings` asks for cannot run with `env`, saying what to set; null when they can. */
export function replicasRefusal(settings: PlaneSettings, env: Env): string | null {
  const count = settings.replicaPorts?.length ?? 1;
  if (count < 2 || env.DATABASE_URL) return null;
  return `--replicas ${count} needs DATABASE_URL: replicas share one Postgres server, and the embedded PGlite is one process's database (set DATABASE_URL=postgres://… to a server with pgvector; docs/OPERATIONS.md#replicas)`;
}

/** Thrown when `--replicas` cannot run as asked; its message says what to set. */
export class ReplicasRefused extends Error {
  override name = 'ReplicasRefused';
}

/**
 * Makes DATA_DIR ready (secrets loaded or generated, the edge's env file written) and returns how
 * each plane is started, wired to the other. `env` is the environment both planes inherit. With
 * `settings.replicaPorts` (two or more) the replicas' one database is migrated here too, once, so
 * that replicas starting together do not race to apply the same migration.
 */
export async function preparePlanes(settings: PlaneSettings, env: Env = process.env, reach: PlaneReach = {}): Promise<PlaneLaunches> {
  const replicaPorts = settings.replicaPorts && settings.replicaPorts.length > 1 ? settings.replicaPorts : null;
  const refused = replicasRefusal(settings, env);
  if (refused) throw new ReplicasRefused(refused);
  const originUrl = `http://127.0.0.1:${settings.originPort}`;
  const edgeUrl = `http://127.0.0.1:${settings.edgePort}`;
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const secrets = loadOrCreateSecrets(settings.dataDir);
  if (!env.SECRETS_ENCRYPTION_KEYS) {
    // The origin would create it at its first start; created here, every replica reads the same key.
    const created = !existsSync(join(settings.dataDir, LOCAL_KEY_FILE));
    await localEncryptionKeys(settings.dataDir);
    if (created) console.log(`[start] generated ${join(settings.dataDir, LOCAL_KEY_FILE)}`);
  }

  const edgeInstance = randomUUID();
  const edgeVars = {
    INSTANCE_ID: edgeInstance,
    INTERNAL_SECRET: secrets.internal_secret,
    AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(secrets.auth_token_private_jwk),
    ORIGIN_URL: reach.originFromEdge ?? originUrl,
    LICENSING_URL: env.LICENSING_URL ?? `${originUrl}/licensing`,
    ...passThrough(env, ['GATE_VARIANT', 'APPROVAL_TOKEN_SUNSET', 'KEEP_APPROVAL_TOKEN_ALIAS', 'AUTHORIZATION_TOKEN_TTL_SECONDS']),
  };
  const edgeEnvFile = join(settings.dataDir, 'edge.env');
  // Single quotes: dotenv takes such values literally, and JWK JSON and base64url never contain one.
  writePrivate(
    edgeEnvFile,
    `${Object.entries(edgeVars)
      .map(([k, v]) => `${k}='${v}'`)
      .join('\n')}\n`,
  );

  const originLaunch = (name: PlaneLaunch['name'], port: number): PlaneLaunch => {
    const instance = randomUUID();
    return {
      name,
      url: `http://127.0.0.1:${port}`,
      port,
      portSetting: 'ORIGIN_PORT',
      instance,
      command: bin('tsx'),
      args: [join(root, 'origin/src/main.ts')],
      cwd: root,
      env: {
        ...env,
        ORIGIN_PORT: String(port),
        // Replicas serve only their front, on this machine.
        ...(replicaPorts ? { ORIGIN_HOST: '127.0.0.1' } : {}),
        INSTANCE_ID: instance,
        DATA_DIR: settings.dataDir,
        EDGE_URL: reach.edgeFromOrigin ?? edgeUrl,
        INTERNAL_SECRET: secrets.internal_secret,
        JWT_PRIVATE_JWK: JSON.stringify(secrets.jwt_private_jwk),
        CHECKPOINT_PRIVATE_JWK: JSON.stringify(secrets.checkpoint_private_jwk),
        LICENSING_URL: edgeVars.LICENSING_URL,
      },
    };
  };
  const replicas = replicaPorts
    ? replicaPorts.map((port, index) => originLaunch(`origin-${index + 1}`, port))
    : [originLaunch('origin', settings.originPort)];
  if (replicaPorts) await migrateOnce(replicas[0]!.env);

  const edge: PlaneLaunch = {
    name: 'edge',
    url: edgeUrl,
    port: settings.edgePort,
    portSetting: 'EDGE_PORT',
    instance: edgeInstance,
    command: bin('wrangler'),
    args: [
      'dev',
      '--config',
      join(root, 'wrangler.toml'),
      '--ip',
      '127.0.0.1',
      '--port',
      String(settings.edgePort),
      '--inspector-port',
      String(await freePort()),
      '--persist-to',
      join(settings.dataDir, 'wrangler'),
      '--env-file',
      edgeEnvFile,
      '--log-level',
      'warn',
      '--show-interactive-dev-session=false',
    ],
    cwd: root,
    env: {
      ...env,
      WRANGLER_SEND_METRICS: 'false',
      CLOUDFLARE_CF_FETCH_ENABLED: 'false',
      WRANGLER_LOG_PATH: join(settings.dataDir, 'wrangler-logs'),
    },
  };
  return { originUrl, replicas, front: replicaPorts ? { port: settings.originPort, replicaPorts } : null, edge };
}

/** Runs `use` on the configured database with its pending migrations applied, as `npm run db:migrate` does. */
async function withMigratedDatabase<T>(database: OriginConfig['database'], use: (db: Database) => Promise<T>): Promise<T> {
  const { openConfiguredDatabase } = await import('../origin/src/db/open.js');
  const handle = await openConfiguredDatabase(database);
  try {
    await handle.migrate();
    return await use(handle.db);
  } finally {
    await handle.close();
  }
}

/** Applies pending migrations to the replicas' database, with a replica's own settings. */
async function migrateOnce(replicaEnv: Env): Promise<void> {
  const { loadConfig } = await import('../origin/src/config.js');
  await withMigratedDatabase(loadConfig(replicaEnv).database, async () => undefined);
}

function prefixLines(child: ChildProcess, label: string) {
  for (const [stream, out] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    let pending = '';
    stream?.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString()).split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) out.write(`[${label}] ${line}\n`);
    });
  }
}

/** One line per port of `launches` that something already listens on; empty when all are free. */
async function takenPorts(launches: Pick<PlaneLaunch, 'port' | 'portSetting'>[]): Promise<string[]> {
  const taken: string[] = [];
  for (const { port, portSetting } of launches) {
    if (!(await portIsFree(port))) {
      taken.push(`port ${port} (${portSetting}) is already in use by another process: stop it, or set ${portSetting} to a free port`);
    }
  }
  return taken;
}

/**
 * Resolves once the plane `child` runs answers `GET /healthz` with its own instance id; rejects when
 * `child` exits first, when another process answers the port, or when the deadline passes.
 */
export async function waitUntilServing(launch: PlaneLaunch, child: ChildProcess, deadlineMs: number): Promise<void> {
  while (Date.now() < deadlineMs) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`the ${launch.name} exited with ${child.exitCode ?? child.signalCode} before serving on ${launch.url}`);
    }
    let answered: unknown;
    try {
      const response = await fetch(`${launch.url}/healthz`);
      answered = response.ok ? ((await response.json()) as { instance?: unknown }).instance : null;
    } catch {
      answered = undefined; // not listening yet
    }
    if (answered === launch.instance) return;
    if (answered !== undefined) {
      throw new Error(
        `port ${launch.port} (${launch.portSetting}) is answered by another process, not the ${launch.name} just started: stop it, or set ${launch.portSetting} to a free port`,
      );
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`the ${launch.name} did not start serving on ${launch.url} in time`);
}

/** How the `--demo` seed signs in as the admin: with the password in `env`, or as the admin account that already exists. */
interface DemoAdmin {
  env: Env;
  existingAdminId: string | null;
}

/**
 * `--demo`: how the seed will sign in as the admin. With ADMIN_PASSWORD, that password. Else, when the
 * admin account exists already (a data folder a plain `npm start` made, whose generated password was
 * printed once), the seed signs its own admin access token with the origin's key in DATA_DIR once the
 * service serves: whoever can read that folder holds the service's keys anyway, and no password is
 * changed. Else the new admin gets a password kept in DATA_DIR/demo.json. The database is read before
 * the origin opens it (PGlite is one process's database), migrated as the origin would.
 */
async function demoAdmin(settings: PlaneSettings): Promise<DemoAdmin> {
  if (process.env.ADMIN_PASSWORD) return { env: process.env, existingAdminId: null };
  const [{ loadConfig }, { findUserByEmail }] = await Promise.all([
    import('../origin/src/config.js'),
    import('../origin/src/auth/store.js'),
  ]);
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const config = loadConfig({ ...process.env, DATA_DIR: settings.dataDir });
  const existing = await withMigratedDatabase(config.database, (db) => findUserByEmail(db, config.admin.email));
  if (existing) return { env: process.env, existingAdminId: existing.id };
  const { readDemoState, writeDemoState } = await import('./demo-seed.js');
  const state = readDemoState(settings.dataDir);
  state.admin_password ??= randomBytes(18).toString('base64url');
  writeDemoState(settings.dataDir, state);
  return { env: { ...process.env, ADMIN_PASSWORD: state.admin_password }, existingAdminId: null };
}

/** An admin access token for `userId`, signed with the origin's key from DATA_DIR: what a sign-in would return. */
async function localAdminAccessToken(dataDir: string, userId: string): Promise<string> {
  const { createAccessTokens } = await import('../origin/src/auth/access-tokens.js');
  const { jwt_private_jwk } = loadOrCreateSecrets(dataDir);
  const tokens = await createAccessTokens(jwt_private_jwk as unknown as SigningJwk);
  return tokens.issue({ userId, role: 'admin' }, new Date(), randomUUID());
}

async function seedWhenReady(settings: PlaneSettings, admin: DemoAdmin): Promise<void> {
  const { demoInstructions, seedDemo, seedOptionsFrom } = await import('./demo-seed.js');
  const options = seedOptionsFrom({ ...admin.env, DATA_DIR: settings.dataDir }, false);
  if (admin.existingAdminId) options.admin.accessToken = await localAdminAccessToken(settings.dataDir, admin.existingAdminId);
  const seed = await seedDemo(options);
  const signIn = admin.existingAdminId
    ? `the existing admin ${options.admin.email} signed in with the service's key in ${settings.dataDir}`
    : `admin password in ${join(settings.dataDir, 'demo.json')} unless ADMIN_PASSWORD is set`;
  console.log(`[start] demo seeded (${signIn}):\n${demoInstructions(seed)}`);
}

/** `npm start` (scripts/start.ts): builds the pages, starts the planes (and the demo's seed with `--demo`) as the command line asks. */
export async function startService(args: readonly string[] = process.argv.slice(2)): Promise<void> {
  const startedAt = Date.now();
  // Both planes serve the pages' bundles, which are build output, not sources.
  await buildPages();
  const demo = args.includes('--demo');
  const settings = planeSettings();
  let replicas: number;
  try {
    replicas = replicaCount(args);
  } catch (error) {
    console.error(`[start] ${(error as Error).message}`);
    process.exit(1);
  }
  if (replicas > 1) settings.replicaPorts = Array.from({ length: replicas }, (_, i) => settings.originPort + 1 + i);
  // Before anything is written or started: another service on these ports must not be seeded or mistaken for this one.
  const taken = await takenPorts([
    { port: settings.originPort, portSetting: 'ORIGIN_PORT' },
    ...(settings.replicaPorts ?? []).map((port) => ({ port, portSetting: 'ORIGIN_PORT' as const })),
    { port: settings.edgePort, portSetting: 'EDGE_PORT' },
  ]);
  if (taken.length > 0) {
    for (const line of taken) console.error(`[start] ${line}`);
    if (settings.replicaPorts) console.error(`[start] the replicas listen on ORIGIN_PORT+1 … ORIGIN_PORT+${replicas}`);
    process.exit(1);
  }
  // Before the demo's password is written, as before anything else.
  const refused = replicasRefusal(settings, process.env);
  if (refused) {
    console.error(`[start] ${refused}`);
    process.exit(1);
  }
  const admin = demo ? await demoAdmin(settings) : null;
  const env = admin?.env ?? process.env;
  const launches = await preparePlanes(settings, env);
  const { originUrl, edge: edgeLaunch } = launches;
  const edgeUrl = edgeLaunch.url;
  // The front first: the origin's address is taken before any replica starts, and serves as soon as one does.
  let front: OriginFront | null = null;
  if (launches.front) front = await startOriginFront(launches.front.port, launches.front.replicaPorts);
  const spawnPlane = (launch: PlaneLaunch) => {
    const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
    prefixLines(child, launch.name);
    return child;
  };
  const planes = [...launches.replicas, edgeLaunch].map((launch) => ({ launch, child: spawnPlane(launch) }));
  const children = planes.map((plane) => plane.child);

  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    void front?.close();
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    }, 5000);
    force.unref();
    Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() => process.exit(code));
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  let ready = false;
  const running = (name: PlaneLaunch['name']) =>
    planes.filter((p) => p.launch.name.startsWith(name) && p.child.exitCode === null && p.child.signalCode === null);
  for (const { launch, child } of planes) {
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const how = code ?? signal;
      const others = running('origin').map((p) => p.launch.name);
      // After the start, a replica's exit leaves the others serving, as a load balancer would; the edge's, or the last replica's, ends the service.
      if (ready && launch.name !== 'edge' && others.length > 0) {
        console.error(
          `[start] ${launch.name} exited (${how}); ${others.join(', ')} still ${others.length === 1 ? 'serves' : 'serve'} ${originUrl}`,
        );
        return;
      }
      console.error(`[start] ${launch.name} exited (${how}); stopping the other planes`);
      stop(code || 1);
    });
  }

  const deadline = Date.now() + 120_000;
  try {
    await Promise.all(planes.map(({ launch, child }) => waitUntilServing(launch, child, deadline)));
  } catch (error) {
    console.error(`[start] ${(error as Error).message}`);
    stop(1);
    return;
  }
  ready = true;
  if (front) {
    for (const replica of launches.replicas) console.log(`[start] ${replica.name} serves ${replica.url}`);
  }
  const originNote = front
    ? `origin ${originUrl} (front of ${launches.replicas.length} replicas; docs ${originUrl}/docs)`
    : `origin ${originUrl} (docs ${originUrl}/docs)`;
  console.log(`[start] ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: ${originNote}, edge ${edgeUrl} (docs ${edgeUrl}/docs)`);
  if (admin) {
    await seedWhenReady(settings, admin).catch((error: unknown) => {
      // The service keeps running: the seed can be retried with `npm run seed`.
      console.error(`[start] demo seed failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}
