import type { Server } from 'node:http';
import multipart from '@fastify/multipart';
import { limits } from '@vip/shared-schema';
import Fastify, { type FastifyHttpOptions, type FastifyInstance, LogController } from 'fastify';
import { type CheckpointSigner, createCheckpointSigner } from './audit/checkpoints.js';
import { registerAuditRoutes } from './audit/routes.js';
import { registerTlogRoutes } from './audit/tlog-routes.js';
import { type AccessTokens, generateSigningJwk } from './auth/access-tokens.js';
import { createGuards } from './auth/guard.js';
import type { PasswordHasher } from './auth/passwords.js';
import { registerAuthRoutes } from './auth/routes.js';
import { registerBiometricConsentRoutes } from './biometric-consent/routes.js';
import {
  DEFAULT_PROTECTION_LIMITS,
  DEFAULT_REGISTRATIONS_PER_MINUTE,
  defaultSpokenConsentSettings,
  type SpokenConsentSettings,
} from './config.js';
import { registerConsoleRoutes } from './console/routes.js';
import type { DatabaseHandle } from './db/client.js';
import { serializeError } from './db/errors.js';
import { registerDetectionRoutes } from './detection/routes.js';
import { registerHealthRoutes } from './health/routes.js';
import { LOG_REDACTIONS, logEachRequest } from './http/access-log.js';
import { registerDocsRoutes } from './http/docs.js';
import { answerRouterError, clientErrorAnswer, installErrorHandling } from './http/error-handler.js';
import { echoRequestId, requestIdGenerator } from './http/request-id.js';
import { RouteTable } from './http/route-table.js';
import { type ContractRegistry, PATH_PARAMETER_MAX_LENGTH, type RouteKit } from './http/routes.js';
import { type BackgroundJobSettings, type BackgroundJobs, createBackgroundJobs } from './jobs/background-jobs.js';
import { registerLicenseRequestRoutes } from './license-requests/routes.js';
import type { WakeSignal } from './loops/wake-signal.js';
import { registerPlatformRoutes } from './platforms/routes.js';
import {
  registerProvenanceVerifyRoute,
  registerSigningCertificateRoutes,
  registerSoftBindingRoutes,
  registerSoftBindingUploadRoutes,
} from './provenance/routes.js';
import { registerLicenseRoutes } from './registry/licenses/routes.js';
import { registerLicensingPageRoutes } from './registry/licensing-page/routes.js';
import { registerSynthesisConsentRoutes } from './registry/synthesis-consent/routes.js';
import type { Runtime } from './runtime.js';
import { registerScreeningRoutes } from './screening/routes.js';
import { buildServices, type ProtectionSettings, type Services } from './services.js';
import { registerSpokenConsentRoutes } from './spoken-consent/routes.js';
import type { VoiceprintEngine } from './voiceprint/index.js';
import { registerVoiceReviewRoutes, registerVoiceRoutes } from './voices/routes.js';
import { registerWebhookRoutes } from './webhooks/routes.js';
import { type WebhookSettings, webhookSettings } from './webhooks/service.js';

export type { ProtectionSettings } from './services.js';

export interface ServerDeps {
  /** Closed when the app closes, after the background jobs stopped. */
  database: DatabaseHandle;
  tokens: AccessTokens;
  hasher: PasswordHasher;
  runtime: Runtime;
  outbox: WakeSignal;
  logger: { level: string; stream?: NodeJS.WritableStream };
  trustProxy?: boolean;
  /** `INSTANCE_ID`, answered by GET /healthz. */
  instanceId?: string;
  /** Longest a client may take to send a whole request; default 120 s (Fastify's own default is none). */
  requestTimeoutMs?: number;
  /** Absent where no audio is served (tests of other domains): enroll and compare answer 503. */
  voiceprint?: VoiceprintEngine;
  /**
   * Whether the app closes the engine when it closes: main.ts hands its engine over; a test file
   * shares one across its origins and closes it itself.
   */
  closeVoiceprint?: boolean;
  /** Signs audit checkpoints; default a per-process key. */
  checkpoints?: CheckpointSigner;
  /** The transparency log's origin line; default DEFAULT_TLOG_ORIGIN. */
  tlogOrigin?: string;
  /** Default: Variant A, no loopback receivers, system DNS. */
  webhooks?: WebhookSettings;
  /** Limits and the licensing page of the protection loop; default: the configuration's defaults, http://localhost/licensing. */
  protection?: ProtectionSettings;
  /** Default: required (defaultSpokenConsentSettings). */
  spokenConsent?: SpokenConsentSettings;
  /** Account registrations per client address per minute; default DEFAULT_REGISTRATIONS_PER_MINUTE. */
  registrationsPerMinute?: number;
  /** Absent: no background loops are built (tests that drive one job themselves). */
  jobs?: BackgroundJobSettings;
}

const DEFAULT_PROTECTION: ProtectionSettings = { ...DEFAULT_PROTECTION_LIMITS, licensingUrl: 'http://localhost/licensing' };

export interface OriginServer extends Services {
  app: FastifyInstance;
  routeTable: RouteTable;
  /** Built from `ServerDeps.jobs`; started by whoever listens (main.ts), stopped when the app closes. */
  jobs: BackgroundJobs | null;
}

export async function buildServer(deps: ServerDeps): Promise<OriginServer> {
  const requestTimeoutMs = deps.requestTimeoutMs ?? 120_000;
  const options: FastifyHttpOptions<Server> = {
    logger: {
      level: deps.logger.level,
      redact: { paths: LOG_REDACTIONS, censor: '[redacted]' },
      // Every logged error, in requests and background jobs alike, without the parameters of a failed query.
      serializers: { err: serializeError },
      ...(deps.logger.stream ? { stream: deps.logger.stream } : {}),
    },
    // Our own access log replaces Fastify's two lines per request (which would carry the URL).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestIdGenerator(deps.runtime.newId),
    requestIdHeader: false,
    bodyLimit: limits.jsonBodyMaxBytes,
    routerOptions: { maxParamLength: PATH_PARAMETER_MAX_LENGTH },
    frameworkErrors: answerRouterError,
    clientErrorHandler: clientErrorAnswer(deps.runtime.newId),
    trustProxy: deps.trustProxy ?? false,
    // Without these a client that trickles its body holds a connection (and its buffers) forever.
    requestTimeout: requestTimeoutMs,
    // Given to the server's constructor too: Node only enforces it when headersTimeout is not
    // longer, and sweeps connections every 30 s unless told otherwise.
    http: {
      requestTimeout: requestTimeoutMs,
      headersTimeout: Math.min(60_000, requestTimeoutMs),
      connectionsCheckingInterval: Math.min(5_000, Math.max(250, Math.floor(requestTimeoutMs / 4))),
    },
  };
  const app = Fastify(options);
  // JSON only: a text/plain body would otherwise reach the handlers as a string.
  app.removeContentTypeParser('text/plain');
  const routeTable = new RouteTable(app);
  installErrorHandling(app, routeTable);
  echoRequestId(app);
  logEachRequest(app);

  const webhookConfig = deps.webhooks ?? webhookSettings({ allowLoopback: false, gateVariant: 'A' });
  const checkpoints = deps.checkpoints ?? (await createCheckpointSigner(await generateSigningJwk(`ephemeral-${deps.runtime.newId()}`)));
  const services = buildServices({
    db: deps.database.db,
    tokens: deps.tokens,
    hasher: deps.hasher,
    runtime: deps.runtime,
    outbox: deps.outbox,
    voiceprint: deps.voiceprint,
    checkpoints,
    tlogOrigin: deps.tlogOrigin,
    webhooks: webhookConfig,
    protection: deps.protection ?? DEFAULT_PROTECTION,
    spokenConsent: deps.spokenConsent ?? defaultSpokenConsentSettings,
    registrationsPerMinute: deps.registrationsPerMinute ?? DEFAULT_REGISTRATIONS_PER_MINUTE,
    // The edge the background jobs sync with and collect from.
    edge: deps.jobs?.edge,
  });
  const jobs = deps.jobs
    ? createBackgroundJobs({
        db: deps.database.db,
        clock: deps.runtime.clock,
        log: app.log,
        outbox: deps.outbox,
        audit: services.audit,
        tlog: services.tlog,
        licenses: services.licenses,
        spokenConsent: services.spokenConsent,
        webhookSender: webhookConfig.sender,
        settings: deps.jobs,
      })
    : null;
  // Shutdown is this one hook, in main.ts and in tests alike: after the server stopped taking requests.
  app.addHook('onClose', async () => {
    try {
      await jobs?.stop();
      if (deps.closeVoiceprint) await deps.voiceprint?.close();
    } finally {
      await deps.database.close();
    }
  });

  const kit: RouteKit = {
    app,
    registry: [] as ContractRegistry,
    guards: createGuards(app, { tokens: deps.tokens, clock: deps.runtime.clock, apiKeys: services.platforms }),
  };
  registerHealthRoutes(kit, services.health, deps.instanceId);
  registerAuthRoutes(kit, services.auth, deps.tokens);
  registerPlatformRoutes(kit, services.platforms);
  registerSynthesisConsentRoutes(kit, services.synthesisConsents);
  registerLicenseRoutes(kit, services.licenses);
  registerLicensingPageRoutes(kit, services.licenses);
  registerBiometricConsentRoutes(kit, services.biometricConsents);
  registerSpokenConsentRoutes(kit, services.spokenConsent);
  registerVoiceReviewRoutes(kit, services.voiceReviews);
  // Multipart parsing only where audio is uploaded; every other route stays JSON-only.
  app.register(async (scope) => {
    await scope.register(multipart);
    const scoped = { ...kit, app: scope };
    registerVoiceRoutes(scoped, services.voices, services.voiceDisputes);
    registerDetectionRoutes(scoped, services.detection);
    registerScreeningRoutes(scoped, services.screening);
    registerProvenanceVerifyRoute(scoped, services.provenance);
    registerSoftBindingUploadRoutes(scoped, services.softBinding);
  });
  registerSoftBindingRoutes(kit, services.softBinding);
  registerSigningCertificateRoutes(kit, services.signingCertificates);
  registerLicenseRequestRoutes(kit, services.licenseRequests);
  registerAuditRoutes(kit, services.audit);
  registerTlogRoutes(kit, services.tlog);
  registerWebhookRoutes(kit, services.webhooks);
  registerConsoleRoutes(kit);
  registerDocsRoutes(kit);

  await app.ready();
  return { ...services, app, routeTable, jobs };
}
