import { DEFAULT_RETRY_SCHEDULE_SECONDS, DEFAULT_TLOG_ORIGIN, GATE_VARIANTS, type GateVariant } from '@vip/shared-schema';
import { z } from 'zod';
import { parseJsonOrUndefined } from './parse-json.js';

// Nothing of the app is imported here but the dependency-free parse-json.ts: every domain may read
// the configuration, and the configuration knows no domain (test/architecture/origin-layers.test.ts).

/** A key that encrypts stored webhook secrets (webhooks/secret-encryption.ts). */
export interface EncryptionKey {
  /** Named in every stored value, so a value finds its key after the list changes. */
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

const KEY_ENTRY = /^([A-Za-z0-9_-]{1,64}):([A-Za-z0-9_-]{43})$/;

/** `kid:key,kid:key…` (SECRETS_ENCRYPTION_KEYS, and the local key file), each key 32 bytes in base64url; the first encrypts. */
export function parseEncryptionKeys(text: string): EncryptionKey[] {
  const keys = text.split(',').map((entry) => {
    const match = KEY_ENTRY.exec(entry.trim());
    if (!match) throw new Error('expected kid:key[,kid:key…], each key 32 random bytes in base64url (43 characters)');
    return { id: match[1]!, key: Buffer.from(match[2]!, 'base64url') };
  });
  if (new Set(keys.map((entry) => entry.id)).size !== keys.length) throw new Error('each kid may appear only once');
  return keys;
}

/** The admin account `npm start` creates when ADMIN_EMAIL is not set. */
export const DEFAULT_ADMIN_EMAIL = 'admin@vip.local';

/** Screenings and comparisons per minute per API key (or user), and licence requests per minute per API key, unless configured. */
export const DEFAULT_PROTECTION_LIMITS = { screeningPerMinute: 60, comparePerMinute: 60, licenseRequestsPerMinute: 10 } as const;

/** Account registrations (POST /api/v1/auth/register) per minute per client address, unless configured. */
export const DEFAULT_REGISTRATIONS_PER_MINUTE = 5;

/**
 * Bounds on waiting for the database (docs/OPERATIONS.md#database-timeouts). A request that meets one
 * answers 503 `unavailable` with Retry-After instead of hanging, and holds no connection longer.
 * `statementMs` and `lockMs` are Postgres's statement_timeout and lock_timeout; `acquireMs` bounds
 * waiting for a pooled connection (and opening a new one).
 */
export const DEFAULT_DATABASE_TIMEOUTS = { statementMs: 5_000, lockMs: 2_000, acquireMs: 4_000 } as const;
export type DatabaseTimeouts = { [K in keyof typeof DEFAULT_DATABASE_TIMEOUTS]: number };

/**
 * `required` (the default): every enrollment and re-enrollment needs a spoken consent. `when_given`:
 * one that is sent is checked like a required one, and an enrollment without one goes ahead as
 * before, for a deployment whose clients do not send one yet (docs/OPERATIONS.md#spoken-consent).
 */
export const SPOKEN_CONSENT_MODES = ['required', 'when_given'] as const;
export type SpokenConsentMode = (typeof SPOKEN_CONSENT_MODES)[number];

export interface SpokenConsentSettings {
  mode: SpokenConsentMode;
  /** 0: the phrase must be heard exactly; 1: one word of it may be wrong. */
  phraseMaxWrongWords: number;
}

export const defaultSpokenConsentSettings: SpokenConsentSettings = { mode: 'required', phraseMaxWrongWords: 1 };

/** An unset variable and an empty one mean the same: use the default. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((value) => (value === '' ? undefined : value), schema.optional());

const logLevels = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const envSchema = z
  .object({
    ORIGIN_PORT: optional(z.coerce.number().int().min(0).max(65535)).default(8080),
    ORIGIN_HOST: optional(z.string()).default('127.0.0.1'),
    /** Answered by GET /healthz, so whoever started this process can tell it from another on the same port. */
    INSTANCE_ID: optional(z.string().regex(/^[\w-]{1,64}$/, 'letters, digits, `_` and `-`, at most 64')),
    DATA_DIR: optional(z.string()).default('./.data'),
    /** Set: a Postgres server through the Neon driver. Unset: embedded PGlite under DATA_DIR/pglite. */
    DATABASE_URL: optional(z.url({ protocol: /^postgres(ql)?$/ })),
    /** `auto` starts the local WebSocket-to-TCP proxy when DATABASE_URL names a loopback host (Neon needs none). */
    DATABASE_WS_PROXY: optional(z.enum(['auto', 'on', 'off'])).default('auto'),
    /** Longest one SQL statement may run on a Postgres server (statement_timeout); the client gives up shortly after. */
    DATABASE_STATEMENT_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000)).default(DEFAULT_DATABASE_TIMEOUTS.statementMs),
    /** Longest a statement waits for a lock (lock_timeout), held by another transaction or another replica. */
    DATABASE_LOCK_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000)).default(DEFAULT_DATABASE_TIMEOUTS.lockMs),
    /** Longest a request waits for a database connection: a free one in the pool, a new one to open, or PGlite's only one. */
    DATABASE_ACQUIRE_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000)).default(DEFAULT_DATABASE_TIMEOUTS.acquireMs),
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
    /** Run this manifest model instead of the automatic choice (fetched CAM++, else the first bundled): pins the model across an upgrade. */
    VOICEPRINT_MODEL: optional(z.string().regex(/^[\w.-]+$/, 'a model name from the manifest')),
    /** Worker threads of the voiceprint engine; default: one less than the cores, at most 2. */
    VOICEPRINT_THREADS: optional(z.coerce.number().int().min(1).max(64)),
    /** Files allowed to wait for a thread; beyond that, 503 with Retry-After. */
    VOICEPRINT_MAX_QUEUE: optional(z.coerce.number().int().min(0).max(10_000)).default(16),
    /** Same-speaker thresholds overriding the manifest's: `model=0.62,other-model=0.5`. */
    VOICEPRINT_THRESHOLDS: optional(z.string().regex(/^[\w.-]+=-?\d*\.?\d+(,[\w.-]+=-?\d*\.?\d+)*$/, 'model=number,model=number')),
    /**
     * The registry size 1:N decisions are designed for, and their target rates; unset, the voiceprint
     * engine's defaults (origin/src/voiceprint/operating-points.ts, listed in origin/README.md).
     */
    DESIGN_REGISTRY_SIZE: optional(z.coerce.number().int().min(1).max(100_000_000)),
    /** Share of screenings (and Variant B detections) of an unregistered speaker that name a voice anyway, at the design size. */
    SCREENING_FPIR: optional(z.coerce.number().gt(0).lt(1)),
    /** Share of enrollments of a speaker nobody enrolled that are refused as identity conflicts, at the design size. */
    CONFLICT_STRICT_FPIR: optional(z.coerce.number().gt(0).lt(1)),
    /** Share of re-enrollments of an already enrolled speaker (by another owner) that pass without being held for review. */
    CONFLICT_REVIEW_FNIR: optional(z.coerce.number().gt(0).lt(1)),
    /** Screenings (POST /api/v1/protect/screen) each API key (or admin) may make per minute. */
    SCREENING_PER_MINUTE: optional(z.coerce.number().int().min(1).max(100_000)).default(DEFAULT_PROTECTION_LIMITS.screeningPerMinute),
    /** Comparisons (POST /api/v1/detection/compare) each API key (or user) may make per minute. */
    COMPARE_PER_MINUTE: optional(z.coerce.number().int().min(1).max(100_000)).default(DEFAULT_PROTECTION_LIMITS.comparePerMinute),
    /** Licence requests each API key may make per minute. */
    LICENSE_REQUESTS_PER_MINUTE: optional(z.coerce.number().int().min(1).max(100_000)).default(
      DEFAULT_PROTECTION_LIMITS.licenseRequestsPerMinute,
    ),
    /** Account registrations (each a scrypt hash) per client address per minute; behind a reverse proxy this needs TRUST_PROXY. */
    REGISTRATIONS_PER_MINUTE: optional(z.coerce.number().int().min(1).max(100_000)).default(DEFAULT_REGISTRATIONS_PER_MINUTE),
    /** Spoken consent at enrollment (docs/OPERATIONS.md#spoken-consent): `required`, or checked only `when_given`. */
    SPOKEN_CONSENT: optional(z.enum(SPOKEN_CONSENT_MODES)).default(defaultSpokenConsentSettings.mode),
    /** Words of the challenge phrase that may be misheard: 0 or 1. */
    SPOKEN_CONSENT_PHRASE_MAX_WRONG_WORDS: optional(z.coerce.number().int().min(0).max(1)).default(
      defaultSpokenConsentSettings.phraseMaxWrongWords,
    ),
    /** The public licensing page screening answers point at (`license_url`); default this origin's own /licensing. */
    LICENSING_URL: optional(z.url({ protocol: /^https?$/ })),
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
    /** How long the audit collector waits between pulls of the edge while nothing is pending; unset: the collector's own default. */
    AUDIT_COLLECT_INTERVAL_MS: optional(z.coerce.number().int().min(100).max(600_000)),
    /** The transparency log's origin line and signed-note key name (C2SP tlog-checkpoint): no spaces or `+`. */
    TLOG_ORIGIN: optional(z.string().regex(/^[^\s+\u2014]{1,200}$/u, 'no whitespace, plus signs or em dashes')).default(
      DEFAULT_TLOG_ORIGIN,
    ),
    /** Shortest time between two signed transparency-log checkpoints: a new entry waits at most this long for one. */
    TLOG_CHECKPOINT_INTERVAL_MS: optional(z.coerce.number().int().min(50).max(60_000)).default(250),
    /** `B` also allows `voice.detected` subscriptions (docs/CONTRACT.md#answers-to-the-specifications-gaps). */
    GATE_VARIANT: optional(z.enum(GATE_VARIANTS)).default('A'),
    /** Lets webhooks target loopback addresses (local test receivers); other private ranges stay refused. */
    WEBHOOK_ALLOW_LOOPBACK: optional(z.stringbool()).default(false),
    /** Seconds before each delivery attempt, replacing the Standard Webhooks schedule, e.g. `0,1,1,2`. */
    WEBHOOK_RETRY_SCHEDULE: optional(z.string().regex(/^\d+(,\d+)*$/, 'comma-separated whole seconds')),
    /** How long a receiver gets to answer one delivery attempt; kept under the worker's 60 s claim lease. */
    WEBHOOK_TIMEOUT_SECONDS: optional(z.coerce.number().int().min(1).max(30)).default(15),
    /** Deliveries of one endpoint in flight at once, all replicas together (one voice's state events still one at a time). */
    WEBHOOK_CONCURRENCY: optional(z.coerce.number().int().min(1).max(64)).default(8),
  })
  .refine((env) => !env.EDGE_URL || env.INTERNAL_SECRET, { path: ['INTERNAL_SECRET'], message: 'required when EDGE_URL is set' });

const jwkSchema = z.object({ kty: z.literal('OKP'), crv: z.literal('Ed25519'), d: z.string(), x: z.string(), kid: z.string().min(1) });

export interface OriginConfig {
  port: number;
  host: string;
  instanceId: string | undefined;
  dataDir: string;
  database: ({ kind: 'pglite'; dir: string } | { kind: 'postgres'; url: string; localProxy: boolean }) & { timeouts: DatabaseTimeouts };
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
  /** Null: the collector's own default (background-jobs.ts). */
  auditCollectIntervalMs: number | null;
  tlog: { origin: string; checkpointIntervalMs: number };
  gateVariant: GateVariant;
  webhooks: { allowLoopback: boolean; retryScheduleSeconds: number[]; timeoutMs: number; concurrencyPerEndpoint: number };
  licenseExpiryIntervalMs: number;
  /** Per-credential limits of the protection loop's routes, calls per minute. */
  protection: { screeningPerMinute: number; comparePerMinute: number; licenseRequestsPerMinute: number; licensingUrl: string };
  /** Account registrations per client address per minute. */
  registrationsPerMinute: number;
  spokenConsent: SpokenConsentSettings;
  voiceprint: {
    modelsDir: string;
    model: string | undefined;
    backend: 'auto' | 'web' | 'node';
    threads: number | undefined;
    maxQueue: number;
    thresholds: Record<string, number>;
    searchTargets: {
      designRegistrySize: number | undefined;
      screeningFpir: number | undefined;
      conflictStrictFpir: number | undefined;
      conflictReviewFnir: number | undefined;
    };
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
  const timeouts: DatabaseTimeouts = {
    statementMs: e.DATABASE_STATEMENT_TIMEOUT_MS,
    lockMs: e.DATABASE_LOCK_TIMEOUT_MS,
    acquireMs: e.DATABASE_ACQUIRE_TIMEOUT_MS,
  };
  const database: OriginConfig['database'] = e.DATABASE_URL
    ? {
        kind: 'postgres',
        url: e.DATABASE_URL,
        localProxy: e.DATABASE_WS_PROXY === 'on' || (e.DATABASE_WS_PROXY === 'auto' && isLoopbackUrl(e.DATABASE_URL)),
        timeouts,
      }
    : { kind: 'pglite', dir: `${e.DATA_DIR.replace(/\/+$/, '')}/pglite`, timeouts };
  return {
    port: e.ORIGIN_PORT,
    host: e.ORIGIN_HOST,
    instanceId: e.INSTANCE_ID,
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
    auditCollectIntervalMs: e.AUDIT_COLLECT_INTERVAL_MS ?? null,
    tlog: { origin: e.TLOG_ORIGIN, checkpointIntervalMs: e.TLOG_CHECKPOINT_INTERVAL_MS },
    gateVariant: e.GATE_VARIANT,
    webhooks: {
      allowLoopback: e.WEBHOOK_ALLOW_LOOPBACK,
      retryScheduleSeconds: e.WEBHOOK_RETRY_SCHEDULE?.split(',').map(Number) ?? DEFAULT_RETRY_SCHEDULE_SECONDS,
      timeoutMs: e.WEBHOOK_TIMEOUT_SECONDS * 1000,
      concurrencyPerEndpoint: e.WEBHOOK_CONCURRENCY,
    },
    licenseExpiryIntervalMs: e.LICENSE_EXPIRY_INTERVAL_SECONDS * 1000,
    protection: {
      screeningPerMinute: e.SCREENING_PER_MINUTE,
      comparePerMinute: e.COMPARE_PER_MINUTE,
      licenseRequestsPerMinute: e.LICENSE_REQUESTS_PER_MINUTE,
      licensingUrl:
        e.LICENSING_URL ?? `http://${e.ORIGIN_HOST.includes(':') ? `[${e.ORIGIN_HOST}]` : e.ORIGIN_HOST}:${e.ORIGIN_PORT}/licensing`,
    },
    registrationsPerMinute: e.REGISTRATIONS_PER_MINUTE,
    spokenConsent: { mode: e.SPOKEN_CONSENT, phraseMaxWrongWords: e.SPOKEN_CONSENT_PHRASE_MAX_WRONG_WORDS },
    voiceprint: {
      modelsDir: e.MODELS_DIR ?? `${e.DATA_DIR.replace(/\/+$/, '')}/models`,
      model: e.VOICEPRINT_MODEL,
      backend: e.VOICEPRINT_BACKEND,
      threads: e.VOICEPRINT_THREADS,
      maxQueue: e.VOICEPRINT_MAX_QUEUE,
      thresholds: Object.fromEntries(
        (e.VOICEPRINT_THRESHOLDS?.split(',') ?? []).map((pair) => {
          const [model, value] = pair.split('=') as [string, string];
          return [model, Number(value)];
        }),
      ),
      searchTargets: {
        designRegistrySize: e.DESIGN_REGISTRY_SIZE,
        screeningFpir: e.SCREENING_FPIR,
        conflictStrictFpir: e.CONFLICT_STRICT_FPIR,
        conflictReviewFnir: e.CONFLICT_REVIEW_FNIR,
      },
    },
  };
}

function parseJwk(name: string, text: string): z.infer<typeof jwkSchema> {
  const jwk = jwkSchema.safeParse(parseJsonOrUndefined(text));
  if (!jwk.success) throw new Error(`Invalid configuration:\n  ${name}: expected an Ed25519 private JWK (OKP, d, x, kid)`);
  return jwk.data;
}
