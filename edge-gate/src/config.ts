import { GATE_VARIANTS, type GateVariant, limits } from '@vip/shared-schema';
import { z } from 'zod';

/**
 * The Worker's settings, parsed once per `env` object into a typed config (CONVENTIONS). Non-secret
 * defaults live in wrangler.toml [vars]; secrets come from `wrangler secret put` or a local env file.
 */
const flag = z.enum(['true', 'false']).transform((value) => value === 'true');
const count = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const baseUrl = z.url({ protocol: /^https?$/ }).transform((url) => url.replace(/\/+$/, ''));

const ed25519PrivateJwk = z
  .string()
  .transform((text, ctx) => {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not JSON' });
      return z.NEVER;
    }
  })
  .pipe(
    z.looseObject({
      kty: z.literal('OKP'),
      crv: z.literal('Ed25519'),
      x: z.string().min(1),
      d: z.string().min(1),
      kid: z.string().optional(),
    }),
  );

const settingsSchema = z.object({
  GATE_VARIANT: z.enum(GATE_VARIANTS).default('A'),
  ORIGIN_URL: baseUrl,
  LICENSING_URL: z.url({ protocol: /^https?$/ }),
  INTERNAL_SECRET: z.string().min(16),
  AUTH_TOKEN_PRIVATE_JWK: ed25519PrivateJwk,
  AUTHORIZATION_TOKEN_TTL_SECONDS: z.coerce.number().int().min(10).max(3600).default(limits.authorizationTokenTtlSeconds),
  APPROVAL_TOKEN_SUNSET: z.iso.date().default('2026-09-17'),
  APPROVAL_TOKEN_DEPRECATED_AT: z.iso.date().default('2026-04-01'),
  KEEP_APPROVAL_TOKEN_ALIAS: flag.default(false),
  GATE_LIMIT_PER_MINUTE: count(limits.gatePerCredentialPerMinute),
  DEMO_LIMIT_PER_HOUR: count(limits.demoPerIpPerHour),
  PUBLIC_GATE_LIMIT_PER_HOUR: count(limits.publicGatePerIpPerHour),
  /** Answered by GET /healthz, so whoever started this Worker can tell it from another on the same port. */
  INSTANCE_ID: z
    .string()
    .regex(/^[\w-]{1,64}$/)
    .optional(),
});

export interface EdgeConfig {
  variant: GateVariant;
  instanceId: string | undefined;
  originUrl: string;
  licensingUrl: string;
  internalSecret: string;
  authTokenPrivateJwk: JsonWebKey & { kid?: string };
  authorizationTokenTtlSeconds: number;
  approvalAlias: { deprecatedAt: Date; sunset: Date; keepAfterSunset: boolean };
  limits: { gatePerMinute: number; demoPerHour: number; publicGatePerHour: number };
}

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export function parseConfig(env: Record<string, unknown>): EdgeConfig {
  const parsed = settingsSchema.safeParse(env);
  if (!parsed.success) {
    // Name the settings only, never their values: some are secrets.
    const names = [...new Set(parsed.error.issues.map((issue) => String(issue.path[0])))];
    throw new ConfigError(`invalid or missing settings: ${names.join(', ')}`);
  }
  const s = parsed.data;
  return {
    variant: s.GATE_VARIANT,
    instanceId: s.INSTANCE_ID,
    originUrl: s.ORIGIN_URL,
    licensingUrl: s.LICENSING_URL,
    internalSecret: s.INTERNAL_SECRET,
    authTokenPrivateJwk: s.AUTH_TOKEN_PRIVATE_JWK as JsonWebKey & { kid?: string },
    authorizationTokenTtlSeconds: s.AUTHORIZATION_TOKEN_TTL_SECONDS,
    approvalAlias: {
      deprecatedAt: new Date(`${s.APPROVAL_TOKEN_DEPRECATED_AT}T00:00:00Z`),
      // "Retained until 2026-09-17" (docs/CONTRACT.md#versioning): the alias lives through that whole day, UTC.
      sunset: new Date(`${s.APPROVAL_TOKEN_SUNSET}T23:59:59Z`),
      keepAfterSunset: s.KEEP_APPROVAL_TOKEN_ALIAS,
    },
    limits: { gatePerMinute: s.GATE_LIMIT_PER_MINUTE, demoPerHour: s.DEMO_LIMIT_PER_HOUR, publicGatePerHour: s.PUBLIC_GATE_LIMIT_PER_HOUR },
  };
}

const parsedByEnv = new WeakMap<object, EdgeConfig>();

/** workerd hands the same `env` object to every request of an isolate, so this parses once. */
export function configFor(env: object): EdgeConfig {
  let config = parsedByEnv.get(env);
  if (!config) {
    config = parseConfig(env as Record<string, unknown>);
    parsedByEnv.set(env, config);
  }
  return config;
}
