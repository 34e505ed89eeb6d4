/**
 * `npm start`: the whole service on its embedded defaults. Generates and persists what a first
 * start needs (JWT signing keys, the origin-edge internal secret) under DATA_DIR, then runs the
 * origin (Fastify on PGlite unless DATABASE_URL is set) and the edge Worker (wrangler dev, workerd)
 * wired to each other. Ctrl-C stops both.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from './free-port.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const bin = (name: string) => join(root, 'node_modules', '.bin', name);

const settings = {
  originPort: Number(process.env.ORIGIN_PORT ?? 8080),
  edgePort: Number(process.env.EDGE_PORT ?? 8787),
  dataDir: resolve(process.env.DATA_DIR ?? join(root, '.data')),
};
const originUrl = `http://127.0.0.1:${settings.originPort}`;
const edgeUrl = `http://127.0.0.1:${settings.edgePort}`;

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
function loadOrCreateSecrets(): Secrets {
  const path = join(settings.dataDir, 'secrets.json');
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
const passThrough = (names: string[]) =>
  Object.fromEntries(names.filter((n) => process.env[n] !== undefined).map((n) => [n, process.env[n]!]));

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

async function waitUntilServing(url: string, child: ChildProcess, deadlineMs: number): Promise<void> {
  while (Date.now() < deadlineMs) {
    if (child.exitCode !== null) throw new Error(`${url} exited with ${child.exitCode} before serving`);
    try {
      const response = await fetch(`${url}/openapi.json`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  throw new Error(`${url} did not start serving in time`);
}

async function main() {
  const startedAt = Date.now();
  mkdirSync(settings.dataDir, { recursive: true, mode: 0o700 });
  const secrets = loadOrCreateSecrets();

  const edgeVars = {
    INTERNAL_SECRET: secrets.internal_secret,
    AUTH_TOKEN_PRIVATE_JWK: JSON.stringify(secrets.auth_token_private_jwk),
    ORIGIN_URL: originUrl,
    LICENSING_URL: process.env.LICENSING_URL ?? `${originUrl}/licensing`,
    ...passThrough(['GATE_VARIANT', 'APPROVAL_TOKEN_SUNSET', 'KEEP_APPROVAL_TOKEN_ALIAS', 'AUTHORIZATION_TOKEN_TTL_SECONDS']),
  };
  const edgeEnvFile = join(settings.dataDir, 'edge.env');
  // Single quotes: dotenv takes such values literally, and JWK JSON and base64url never contain one.
  writePrivate(
    edgeEnvFile,
    `${Object.entries(edgeVars)
      .map(([k, v]) => `${k}='${v}'`)
      .join('\n')}\n`,
  );

  const origin = spawn(bin('tsx'), [join(root, 'origin/src/main.ts')], {
    cwd: root,
    env: {
      ...process.env,
      ORIGIN_PORT: String(settings.originPort),
      DATA_DIR: settings.dataDir,
      EDGE_URL: edgeUrl,
      INTERNAL_SECRET: secrets.internal_secret,
      JWT_PRIVATE_JWK: JSON.stringify(secrets.jwt_private_jwk),
      CHECKPOINT_PRIVATE_JWK: JSON.stringify(secrets.checkpoint_private_jwk),
      LICENSING_URL: edgeVars.LICENSING_URL,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  prefixLines(origin, 'origin');

  const edge = spawn(
    bin('wrangler'),
    [
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
    {
      cwd: root,
      env: {
        ...process.env,
        WRANGLER_SEND_METRICS: 'false',
        CLOUDFLARE_CF_FETCH_ENABLED: 'false',
        WRANGLER_LOG_PATH: join(settings.dataDir, 'wrangler-logs'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  prefixLines(edge, 'edge');

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
    await Promise.all([waitUntilServing(originUrl, origin, deadline), waitUntilServing(edgeUrl, edge, deadline)]);
  } catch (error) {
    console.error(`[start] ${(error as Error).message}`);
    stop(1);
    return;
  }
  console.log(
    `[start] ready in ${((Date.now() - startedAt) / 1000).toFixed(1)} s: origin ${originUrl} (docs ${originUrl}/docs), edge ${edgeUrl} (docs ${edgeUrl}/docs)`,
  );
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
