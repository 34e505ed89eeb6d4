import { GATE_VARIANTS, type GateVariant } from '@vip/shared-schema';
import { z } from 'zod';
import { parseJsonOrUndefined } from './parse-json.js';
import { DEFAULT_RETRY_SCHEDULE_SECONDS } from './webhooks/schedule.js';
import { type EncryptionKey, parseEncryptionKeys } from './webhooks/secret-encryption.js';

/** The admin account `npm start` creates when ADMIN_EMAIL is not set. */
export const DEFAULT_ADMIN_EMAIL = 'admin@vip.local';

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
    ADMIN_EMAIL: optional(z.email()).default(DEFAULT_ADMIN_EMAIL),
    ADMIN_PASSWORD: optional(z.string()),
    LOG_LEVEL: optional(z.enum(logLevels)).default('info'),
    /** Longest a client may take to send one whole request (headers and body); a trickling client is cut off. */
    REQUEST_TIMEOUT_SECONDS: optional(z.coerce.number().int().min(1).max(3600)).default(120),
    /** Behind a reverse proxy, take the client address from X-Forwarded-For (login rate limits count per IP). */
    TRUST_PROXY: optional(z.stringbool()).default(false),
    /** How often the licence expiry job marks licences past their expiry as expired. */
    LICENSE_EXPIRY_INTERVAL_SECONDS: optional(z.coerce.number().int().min(1).max(3600)).default(30),
    /** Where fetched speaker models live; default DATA_DIR/models. */
    MODELS_DIR: optional(z.string()),
    VOICEPRINT_BACKEND: optional(z.enum(['auto', 'web', 'node'])).default('auto'),
    /** Worker threads of the voiceprint engine; default: one less than the cores, at most 2. */
    VOICEPRINT_THREADS: optional(z.coerce.number().int().min(1).max(64)),
    /** Files allowed to wait for a thread; beyond that, 503 with Retry-After. */
    VOICEPRINT_MAX_QUEUE: optional(z.coerce.number().int().min(0).max(10_000)).default(16),
    /** Same-speaker thresholds overriding the manifest's: `model=0.62,other-model=0.5`. */
    VOICEPRINT_THRESHOLDS: optional(z.string().regex(/^[\w.-]+=-?\d*\.?\d+(,[\w.-]+=-?\d*\.?\d+)*$/, 'model=number,model=number')),
    /** Ed25519 private JWK (with kid) that signs audit checkpoints; unset = a per-process key (warned). */
    CHECKPOINT_PRIVATE_JWK: optional(z.string()),
    /**
     * `kid:key,kid:key…` (keys: 32 random bytes, base64url) encrypting stored webhook secrets; the first
     * encrypts, all decrypt. Unset: a key kept in DATA_DIR (warned).
     */
    SECRETS_ENCRYPTION_KEYS: optional(
      z.string().transform((text, context) => {
        try {
          return parseEncryptionKeys(text);
        } catch (error) {
          context.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
    ),
    AUDIT_CHECKPOINT_INTERVAL_SECONDS: optional(z.coerce.number().int().min(1).max(86_400)).default(60),
    /** `B` also allows `voice.detected` subscriptions (DESIGN section 6). */
    GATE_VARIANT: optional(z.enum(GATE_VARIANTS)).default('A'),
    /** Lets webhooks target loopback addresses (local test receivers); other private ranges stay refused. */
    WEBHOOK_ALLOW_LOOPBACK: optional(z.stringbool()).default(false),
    /** Seconds before each delivery attempt, replacing the Standard Webhooks schedule, e.g. `0,1,1,2`. */
    WEBHOOK_RETRY_SCHEDULE: optional(z.string().regex(/^\d+(,\d+)*$/, 'comma-separated whole seconds')),
    /** How long a receiver gets to answer one delivery attempt; kept under the worker's 60 s claim lease. */
    WEBHOOK_TIMEOUT_SECONDS: optional(z.coerce.number().int().min(1).max(30)).default(15),
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
  requestTimeoutMs: number;
  checkpointPrivateJwk: z.infer<typeof jwkSchema> | null;
  /** Null: the embedded default, a key file under DATA_DIR. */
  secretsEncryptionKeys: EncryptionKey[] | null;
  auditCheckpointIntervalMs: number;
  gateVariant: GateVariant;
  webhooks: { allowLoopback: boolean; retryScheduleSeconds: number[]; timeoutMs: number };
  licenseExpiryIntervalMs: number;
  voiceprint: {
    modelsDir: string;
    backend: 'auto' | 'web' | 'node';
    threads: number | undefined;
    maxQueue: number;
    thresholds: Record<string, number>;
  };
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);
/** Whether a URL names this machine (a local database, a local service). */
export const isLoopbackUrl = (url: string): boolean => LOOPBACK_HOSTS.has(new URL(url).hostname);

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
    const jwk = jwkSchema.safeParse(parseJsonOrUndefined(e.JWT_PRIVATE_JWK));
    if (!jwk.success) throw new Error('Invalid configuration:\n  JWT_PRIVATE_JWK: expected an Ed25519 private JWK (OKP, d, x, kid)');
    jwtPrivateJwk = jwk.data;
  }
  const database: OriginConfig['database'] = e.DATABASE_URL
    ? {
        kind: 'postgres',
        url: e.DATABASE_URL,
        localProxy: e.DATABASE_WS_PROXY === 'on' || (e.DATABASE_WS_PROXY === 'auto' && isLoopbackUrl(e.DATABASE_URL)),
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
    requestTimeoutMs: e.REQUEST_TIMEOUT_SECONDS * 1000,
    checkpointPrivateJwk: e.CHECKPOINT_PRIVATE_JWK ? parseJwk('CHECKPOINT_PRIVATE_JWK', e.CHECKPOINT_PRIVATE_JWK) : null,
    secretsEncryptionKeys: e.SECRETS_ENCRYPTION_KEYS ?? null,
    auditCheckpointIntervalMs: e.AUDIT_CHECKPOINT_INTERVAL_SECONDS * 1000,
    gateVariant: e.GATE_VARIANT,
    webhooks: {
      allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK,
      retryScheduleSeconds: e.WEBHOOK_RETRY_SCHEDULE?.split(',').map(Number) ?? DEFAULT_RETRY_SCHEDULE_SECONDS,
      timeoutMs: e.WEBHOOK_TIMEOUT_SECONDS * 1000,
    },
    licenseExpiryIntervalMs: e.LICENSE_EXPIRY_INTERVAL_SECONDS * 1000,
    voiceprint: {
      modelsDir: e.MODELS_DIR ?? `${e.DATA_DIR.replace(/\/+$/, '')}/models`,
      backend: e.VOICEPRINT_BACKEND,
      threads: e.VOICEPRINT_THREADS,
      maxQueue: e.VOICEPRINT_MAX_QUEUE,
      thresholds: Object.fromEntries(
        (e.VOICEPRINT_THRESHOLDS?.split(',') ?? []).map((pair) => {
          const [model, value] = pair.split('=') as [string, string];
          return [model, Number(value)];
        }),
      ),
    },
  };
}

function parseJwk(name: string, text: string): z.infer<typeof jwkSchema> {
  const jwk = jwkSchema.safeParse(parseJsonOrUndefined(text));
  if (!jwk.success) throw new Error(`Invalid configuration:\n  ${name}: expected an Ed25519 private JWK (OKP, d, x, kid)`);
  return jwk.data;
}
