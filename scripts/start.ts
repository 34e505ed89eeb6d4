/**
 * `npm start`: the whole service on its embedded defaults. Generates and persists what a first
 * start needs (JWT signing keys, the origin-edge internal secret) under DATA_DIR, then runs the
 * origin (Fastify on PGlite unless DATABASE_URL is set) and the edge Worker (wrangler dev, workerd)
 * wired to each other. Ctrl-C stops both.
 *
 * `npm start -- --demo` also seeds a demo registry once both serve (scripts/seed.ts) and prints the
 * commands that reach each gate outcome. Without ADMIN_PASSWORD it gives a new admin account a
 * password it keeps in DATA_DIR/demo.json, so that the seed (and you) can log in as that admin.
 *
 * `preparePlanes` is exported so that tests can start, stop and restart one plane at a time with
 * exactly the command and environment this script uses (test/support/service.ts `startPlanes`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes, randomUUID } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, portIsFree } from './free-port.js';
import { type PlaneSettings, planeSettings } from './plane-settings.js';

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

/** How one plane is started: the command, its arguments and its whole environment. */
export interface PlaneLaunch {
  name: 'origin' | 'edge';
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

/**
 * Makes DATA_DIR ready (secrets loaded or generated, the edge's env file written) and returns how
 * each plane is started, wired to the other. `env` is the environment both planes inherit.
 */
export async function preparePlanes(settings: PlaneSettings, env: Env = process.env): Promise<{ origin: PlaneLaunch; edge: PlaneLaunch }> {
  const originUrl = `http://127.0.0.1:${settings.originPort}`;
  const edgeUrl = `http://127.0.0.1:${settings.edgePort}`;
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const secrets = loadOrCreateSecrets(settings.dataDir);

  const [originInstance, edgeInstance] = [randomUUID(), randomUUID()];
  const edgeVars = {
    INSTANCE_ID: edgeInstance,
    INTERNAL_SECRET: secrets.internal_secret,
    AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(secrets.auth_token_private_jwk),
    ORIGIN_URL: originUrl,
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

  const origin: PlaneLaunch = {
    name: 'origin',
    url: originUrl,
    port: settings.originPort,
    portSetting: 'ORIGIN_PORT',
    instance: originInstance,
    command: bin('tsx'),
    args: [join(root, 'origin/src/main.ts')],
    cwd: root,
    env: {
      ...env,
      ORIGIN_PORT: String(settings.originPort),
      INSTANCE_ID: originInstance,
      DATA_DIR: settings.dataDir,
      EDGE_URL: edgeUrl,
      INTERNAL_SECRET: secrets.internal_secret,
      JWT_PRIVATE_JWK: JSON.stringify(secrets.jwt_private_jwk),
      CHECKPOINT_PRIVATE_JWK: JSON.stringify(secrets.checkpoint_private_jwk),
      LICENSING_URL: edgeVars.LICENSING_URL,
    },
  };
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
  return { origin, edge };
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

/** `--demo`: the admin password the seed logs in with, kept in DATA_DIR/demo.json unless ADMIN_PASSWORD is set. */
async function demoEnvironment(settings: PlaneSettings): Promise<Env> {
  if (process.env.ADMIN_PASSWORD) return process.env;
  const { readDemoState, writeDemoState } = await import('./seed.js');
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const state = readDemoState(settings.dataDir);
  state.admin_password ??= randomBytes(18).toString('base64url');
  writeDemoState(settings.dataDir, state);
  return { ...process.env, ADMIN_PASSWORD: state.admin_password };
}

async function seedWhenReady(settings: PlaneSettings, env: Env): Promise<void> {
  const { demoInstructions, seedDemo, seedOptionsFrom } = await import('./seed.js');
  const seed = await seedDemo(seedOptionsFrom({ ...env, DATA_DIR: settings.dataDir }, false));
  console.log(
    `[start] demo seeded (admin password in ${join(settings.dataDir, 'demo.json')} unless ADMIN_PASSWORD is set):\n${demoInstructions(seed)}`,
  );
}

async function main() {
  const startedAt = Date.now();
  const demo = process.argv.slice(2).includes('--demo');
  const settings = planeSettings();
  // Before anything is written or started: another service on these ports must not be seeded or mistaken for this one.
  const taken = await takenPorts([
    { port: settings.originPort, portSetting: 'ORIGIN_PORT' },
    { port: settings.edgePort, portSetting: 'EDGE_PORT' },
  ]);
  if (taken.length > 0) {
    for (const line of taken) console.error(`[start] ${line}`);
    process.exit(1);
  }
  const env = demo ? await demoEnvironment(settings) : process.env;
  const launches = await preparePlanes(settings, env);
  const [originUrl, edgeUrl] = [launches.origin.url, launches.edge.url];
  const spawnPlane = (launch: PlaneLaunch) => {
    const child = spawn(launch.command, launch.args, { cwd: launch.cwd, env: launch.env, stdio: ['ignore', 'pipe', 'pipe'] });
    prefixLines(child, launch.name);
    return child;
  };
  const origin = spawnPlane(launches.origin);
  const edge = spawnPlane(launches.edge);

  const children = [origin, edge];
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
    const force = setTimeout(() => {
      for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    }, 5000);
    force.unref();
    Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null))).then(() => process.exit(code));
  };
  process.on('SIGINT', () => stop(0));
  process.on('SIGTERM', () => stop(0));
  for (const child of children) {
    child.once('exit', (code) => {
      if (!stopping) {
        console.error(`[start] ${child === origin ? 'origin' : 'edge'} exited (${code}); stopping the other plane`);
        stop(code || 1);
      }
    });
  }

  const deadline = Date.now() + 120_000;
  try {
    await Promise.all([waitUntilServing(launches.origin, origin, deadline), waitUntilServing(launches.edge, edge, deadline)]);
  } catch (error) {
    console.error(`[start] ${(error as Error).message}`);
    stop(1);
    return;
  }
  console.log(
    `[start] ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: origin ${originUrl} (docs ${originUrl}/docs), edge ${edgeUrl} (docs ${edgeUrl}/docs)`,
  );
  if (demo) {
    await seedWhenReady(settings, env).catch((error: unknown) => {
      // The service keeps running: the seed can be retried with `npm run seed`.
      console.error(`[start] demo seed failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  }
}

// Run as a script (`npm start`, `tsx scripts/start.ts`); imported, it only lends its helpers.
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error) => {
    console.error(error);
    process.exit(1);
  });
}
