import { z } from 'zod';

/** An unset variable and an empty one mean the same: use the default. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const envSchema = z
  .object({
    ORIGIN_PORT: optional(z.coerce.number().int().min(0).max(65535)).default(8080),
    ORIGIN_HOST: optional(z.string()).default('127.0.0.1'),
    DATA_DIR: optional(z.string()).default('./.data'),
    /** Set: a Postgres server through the Neon driver. Unset: embedded PGlite under DATA_DIR/pglite. */
    DATABASE_URL: optional(z.url({ protocol: /^postgres(ql)?$/ })),
    /** `auto` starts the local WebSocket-to-TCP proxy when DATABASE_URL names a loopback host (Neon needs none). */
    DATABASE_WS_PROXY: optional(z.enum(['auto', 'on', 'off'])).default('auto'),
    EDGE_URL: optional(z.url({ protocol: /^https?$/ })),
    INTERNAL_SECRET: optional(z.string().min(16)),
    /** Ed25519 private JWK (with kid) that signs access tokens. */
    JWT_PRIVATE_JWK: optional(z.string()),
    ADMIN_EMAIL: optional(z.email()).default('admin@vip.local'),
    ADMIN_PASSWORD: optional(z.string()),
    LOG_LEVEL: optional(z.enum(logLevels)).default('info'),
    /** Behind a reverse proxy, take the client address from X-Forwarded-For (login rate limits count per IP). */
    TRUST_PROXY: optional(z.stringbool()).default(false),
  })
  .refine((env) => !env.EDGE_URL || env.INTERNAL_SECRET, { path: ['INTERNAL_SECRET'], message: 'required when EDGE_URL is set' });

const jwkSchema = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), d: z.string(), x: z.string(), kid: z.string().min(1) });

export interface OriginConfig {
  port: number;
  host: string;
  dataDir: string;
  database: { kind: 'pglite'; dir: string } | { kind: 'postgres'; url: string; localProxy: boolean };
  edge: { url: string; internalSecret: string } | null;
  jwtPrivateJwk: z.infer<typeof jwkSchema> | null;
  admin: { email: string; password: string | null };
  logLevel: (typeof logLevels)[number];
  trustProxy: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** Reads the environment once at start-up; nothing else reads process.env. */
export function loadConfig(env: Record<string, string | undefined>): OriginConfig {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `  ${issue.path.join('.')}: ${issue.message}`);
    throw new Error(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const e = parsed.data;
  let jwtPrivateJwk: OriginConfig['jwtPrivateJwk'] = null;
  if (e.JWT_PRIVATE_JWK) {
    const jwk = jwkSchema.safeParse(safeJson(e.JWT_PRIVATE_JWK));
    if (!jwk.success) throw new Error('Invalid configuration:\n  JWT_PRIVATE_JWK: expected an Ed25519 private JWK (OKP, d, x, kid)');
    jwtPrivateJwk = jwk.data;
  }
  const database: OriginConfig['database'] = e.DATABASE_URL
    ? {
        kind: 'postgres',
        url: e.DATABASE_URL,
        localProxy:
          e.DATABASE_WS_PROXY === 'on' || (e.DATABASE_WS_PROXY === 'auto' && LOOPBACK_HOSTS.has(new URL(e.DATABASE_URL).hostname)),
      }
    : { kind: 'pglite', dir: `${e.DATA_DIR.replace(/\/+$/, '')}/pglite` };
  return {
    port: e.ORIGIN_PORT,
    host: e.ORIGIN_HOST,
    dataDir: e.DATA_DIR,
    database,
    edge: e.EDGE_URL && e.INTERNAL_SECRET ? { url: e.EDGE_URL, internalSecret: e.INTERNAL_SECRET } : null,
    jwtPrivateJwk,
    admin: { email: e.ADMIN_EMAIL.toLowerCase(), password: e.ADMIN_PASSWORD ?? null },
    logLevel: e.LOG_LEVEL,
    trustProxy: e.TRUST_PROXY,
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
