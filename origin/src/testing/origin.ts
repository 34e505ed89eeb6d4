import { randomBytes, randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createdApiKeySchema, pathOf, platformSchema } from '@vip/shared-schema';
import { createApiKeyRoute, createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import type { CheckpointSigner } from '../audit/checkpoints.js';
import { type AccessTokens, createAccessTokens, generateSigningJwk, type SigningJwk } from '../auth/access-tokens.js';
import { type PasswordHasher, scryptHasher } from '../auth/passwords.js';
import { type DatabaseTimeouts, defaultSpokenConsentSettings, type SpokenConsentSettings } from '../config.js';
import type { DatabaseHandle } from '../db/client.js';
import { RATE_WINDOW_MS } from '../http/rate-limit.js';
import type { BackgroundJobSettings } from '../jobs/background-jobs.js';
import { WakeSignal } from '../loops/wake-signal.js';
import type { Runtime } from '../runtime.js';
import { buildServer, type OriginServer, type ProtectionSettings } from '../server.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import type { WebhookSettings } from '../webhooks/service.js';
import { openTestDatabase } from './database.js';

/** Cheap scrypt for tests; the encoding carries the cost, so production code paths are the same. */
export const fastHasher = (): PasswordHasher => scryptHasher({ logN: 10, r: 8, p: 1 });

/**
 * The tests enroll corpus speakers, who never read a consent statement and a challenge phrase: their
 * origins check a spoken consent when one is sent. The default, `required`, is tested on its own
 * (spoken-consent/spoken-consent.test.ts, the demo seed in test/e2e).
 */
export const CORPUS_SPEAKERS_SPOKEN_CONSENT: SpokenConsentSettings = { ...defaultSpokenConsentSettings, mode: 'when_given' };

/** Real time plus an offset a test can move forward. */
function movableRuntime(): Runtime & { advance(ms: number): void } {
  let offset = 0;
  return {
    clock: { now: () => new Date(Date.now() + offset) },
    randomBytes: (length) => randomBytes(length),
    newId: () => randomUUID(),
    advance: (ms) => {
      offset += ms;
    },
  };
}

export interface TestOrigin extends OriginServer {
  database: DatabaseHandle;
  runtime: ReturnType<typeof movableRuntime>;
  tokens: AccessTokens;
  signingJwk: SigningJwk;
  outbox: WakeSignal;
  /** Every log line the server wrote, raw. */
  logs: string[];
  /** `app.close()`: the same shutdown as main.ts's (the jobs, if any, then the database). */
  close(): Promise<void>;
}

/** `voiceprint`: an engine the test file created once and shares (it takes seconds to start); it is not closed here. */
/** `webhooks`: settings of the webhook routes (loopback receivers, an injected resolver, the variant). */
/** `jobs`: build the background loops too (`origin.jobs`, not started). */
export async function startTestOrigin(
  options: {
    hasher?: PasswordHasher;
    voiceprint?: VoiceprintEngine;
    webhooks?: WebhookSettings;
    protection?: ProtectionSettings;
    jobs?: BackgroundJobSettings;
    spokenConsent?: SpokenConsentSettings;
    /** The key the log's checkpoints are signed with, for tests that sign notes of their own with it. */
    checkpoints?: CheckpointSigner;
    /** Bounds on waiting for the database, as DATABASE_*_TIMEOUT_MS set them (openTestDatabase). */
    databaseTimeouts?: DatabaseTimeouts;
  } = {},
): Promise<TestOrigin> {
  const database = await openTestDatabase({ timeouts: options.databaseTimeouts });
  const runtime = movableRuntime();
  const signingJwk = await generateSigningJwk('test-key');
  const tokens = await createAccessTokens(signingJwk);
  const outbox = new WakeSignal();
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      logs.push(String(chunk));
      done();
    },
  });
  const server = await buildServer({
    database,
    tokens,
    hasher: options.hasher ?? fastHasher(),
    runtime,
    outbox,
    logger: { level: 'info', stream },
    voiceprint: options.voiceprint,
    webhooks: options.webhooks,
    protection: options.protection,
    jobs: options.jobs,
    spokenConsent: options.spokenConsent ?? CORPUS_SPEAKERS_SPOKEN_CONSENT,
    checkpoints: options.checkpoints,
  });
  return {
    ...server,
    database,
    runtime,
    tokens,
    signingJwk,
    outbox,
    logs,
    close: () => server.app.close(),
  };
}

/** Background loops that run each periodic round at most once a minute, with no edge: for tests that start `origin.jobs`. */
export const UNHURRIED_JOBS: BackgroundJobSettings = {
  edge: null,
  licenseExpiryIntervalMs: 60_000,
  auditCheckpointIntervalMs: 60_000,
  tlogCheckpointIntervalMs: 60_000,
  webhookRetryScheduleSeconds: [0],
  webhookConcurrencyPerEndpoint: 8,
};

/**
 * Moves the origin's clock to the start of a rate-limit window (fixed windows of RATE_WINDOW_MS,
 * http/rate-limit.ts), so a test that counts calls up to a limit is not cut by a window ending
 * half-way through, however slow the machine.
 */
export function atStartOfRateWindow(origin: Pick<TestOrigin, 'runtime'>): void {
  const now = origin.runtime.clock.now().getTime();
  origin.runtime.advance(RATE_WINDOW_MS - (now % RATE_WINDOW_MS) + 1);
}

let emailCounter = 0;
export const uniqueEmail = (label = 'user') => `${label}-${Date.now().toString(36)}-${++emailCounter}@example.com`;
export const PASSWORD = 'correct horse battery staple';

/** A logged-in account of the given role; admins are made directly, as the start-up bootstrap does. */
export async function loggedIn(origin: TestOrigin, role: 'owner' | 'admin' = 'owner') {
  const email = uniqueEmail(role);
  const user = await origin.auth.createUser(email, PASSWORD, role);
  const session = await origin.auth.login(email, PASSWORD, '192.0.2.1');
  return { email, userId: user!.id, accessToken: session.access_token, refreshToken: session.refresh_token };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A registered platform named `name` and a fresh API key for it, made through the API by an admin. */
export async function platformWithApiKey(origin: TestOrigin, adminToken: string, name: string) {
  const platform = platformSchema.parse(
    (await origin.app.inject({ method: 'POST', url: pathOf(createPlatformRoute), headers: bearer(adminToken), payload: { name } })).json(),
  );
  const created = await origin.app.inject({
    method: 'POST',
    url: pathOf(createApiKeyRoute, { platform_id: platform.platform_id }),
    headers: bearer(adminToken),
    payload: {},
  });
  return { platformId: platform.platform_id, ...createdApiKeySchema.parse(created.json()) };
}
