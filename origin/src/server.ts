import type { Server } from 'node:http';
import multipart from '@fastify/multipart';
import { DEFAULT_TLOG_ORIGIN, limits } from '@vip/shared-schema';
import Fastify, { type FastifyHttpOptions, type FastifyInstance, LogController } from 'fastify';
import { type CheckpointSigner, createCheckpointSigner } from './audit/checkpoints.js';
import { registerAuditRoutes } from './audit/routes.js';
import { AuditService } from './audit/service.js';
import { registerTlogRoutes } from './audit/tlog-routes.js';
import { TransparencyLog } from './audit/tlog-service.js';
import { type AccessTokens, generateSigningJwk } from './auth/access-tokens.js';
import { createGuards } from './auth/guard.js';
import type { PasswordHasher } from './auth/passwords.js';
import { registerAuthRoutes } from './auth/routes.js';
import { AuthService } from './auth/service.js';
import { registerConsentRoutes } from './consents/routes.js';
import { ConsentService } from './consents/service.js';
import { registerConsoleRoutes } from './console/routes.js';
import type { Database } from './db/client.js';
import { serializeError } from './db/errors.js';
import { registerDetectionRoutes } from './detection/routes.js';
import { DetectionService } from './detection/service.js';
import type { OutboxSignal } from './edge-sync/signal.js';
import { registerHealthRoutes } from './health/routes.js';
import { LOG_REDACTIONS, logEachRequest } from './http/access-log.js';
import { registerDocsRoutes } from './http/docs.js';
import { installErrorHandling } from './http/error-handler.js';
import { RateLimiter } from './http/rate-limit.js';
import { echoRequestId, requestIdGenerator } from './http/request-id.js';
import { RouteTable } from './http/route-table.js';
import type { ContractRegistry } from './http/routes.js';
import { registerLicenseRequestRoutes } from './license-requests/routes.js';
import { LicenseRequestService } from './license-requests/service.js';
import { LicenseService } from './licenses/service.js';
import { registerPlatformRoutes } from './platforms/routes.js';
import { PlatformService } from './platforms/service.js';
import type { Runtime } from './runtime.js';
import { registerScreeningRoutes } from './screening/routes.js';
import { ScreeningService } from './screening/service.js';
import { registerRegistryRoutes } from './voice-index/routes.js';
import type { VoiceprintEngine } from './voiceprint/index.js';
import { VoiceReviewService } from './voices/reviews.js';
import { registerVoiceReviewRoutes, registerVoiceRoutes } from './voices/routes.js';
import { VoiceService } from './voices/service.js';
import { registerWebhookRoutes } from './webhooks/routes.js';
import { WebhookService, type WebhookSettings, webhookSettings } from './webhooks/service.js';

export interface ServerDeps {
  db: Database;
  tokens: AccessTokens;
  hasher: PasswordHasher;
  runtime: Runtime;
  outbox: OutboxSignal;
  logger: { level: string; stream?: NodeJS.WritableStream };
  trustProxy?: boolean;
  /** Longest a client may take to send a whole request; default 120 s (Fastify's own default is none). */
  requestTimeoutMs?: number;
  /** Absent where no audio is served (tests of other domains): enroll and compare answer 503. */
  voiceprint?: VoiceprintEngine;
  /** Signs audit checkpoints; default a per-process key. */
  checkpoints?: CheckpointSigner;
  /** The transparency log's origin line; default DEFAULT_TLOG_ORIGIN. */
  tlogOrigin?: string;
  /** Default: Variant A, no loopback receivers, system DNS. */
  webhooks?: WebhookSettings;
  /** Limits and the licensing page of the protection loop; default: the configuration's defaults, http://localhost/licensing. */
  protection?: ProtectionSettings;
}

export interface ProtectionSettings {
  screeningPerMinute: number;
  licenseRequestsPerMinute: number;
  licensingUrl: string;
}

const DEFAULT_PROTECTION: ProtectionSettings = {
  screeningPerMinute: 60,
  licenseRequestsPerMinute: 10,
  licensingUrl: 'http://localhost/licensing',
};

export interface OriginServer {
  app: FastifyInstance;
  auth: AuthService;
  routeTable: RouteTable;
  audit: AuditService;
  tlog: TransparencyLog;
  webhooks: WebhookService;
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

  const registry: ContractRegistry = [];
  registerHealthRoutes(app, registry, { db: deps.db, voiceprint: deps.voiceprint });
  const guards = createGuards(deps.tokens, deps.runtime.clock);
  const auth = new AuthService({ db: deps.db, hasher: deps.hasher, tokens: deps.tokens, runtime: deps.runtime });
  const platforms = new PlatformService({ db: deps.db, runtime: deps.runtime, outbox: deps.outbox });

  registerAuthRoutes(app, registry, guards, auth, deps.tokens);
  registerPlatformRoutes(app, registry, guards, platforms);
  registerRegistryRoutes(app, registry, guards, { db: deps.db, runtime: deps.runtime, outbox: deps.outbox });
  registerConsentRoutes(app, registry, guards, new ConsentService({ db: deps.db, runtime: deps.runtime }));
  registerVoiceReviewRoutes(app, registry, guards, new VoiceReviewService({ db: deps.db, runtime: deps.runtime, outbox: deps.outbox }));
  const webhookConfig = deps.webhooks ?? webhookSettings({ allowLoopback: false, gateVariant: 'A' });
  const protection = deps.protection ?? DEFAULT_PROTECTION;
  const limiter = new RateLimiter(deps.db, deps.runtime.clock);
  // Multipart parsing only where audio is uploaded; every other route stays JSON-only.
  app.register(async (scope) => {
    await scope.register(multipart);
    const engine = deps.voiceprint;
    registerVoiceRoutes(scope, registry, guards, new VoiceService({ db: deps.db, runtime: deps.runtime, outbox: deps.outbox, engine }));
    const reportDetections = webhookConfig.gateVariant === 'B';
    registerDetectionRoutes(
      scope,
      registry,
      guards,
      deps.db,
      new DetectionService({ db: deps.db, runtime: deps.runtime, engine, reportDetections }),
    );
    const screening = new ScreeningService({ db: deps.db, runtime: deps.runtime, limiter, engine, ...protection });
    registerScreeningRoutes(scope, registry, guards, deps.db, screening);
  });
  const checkpoints = deps.checkpoints ?? (await createCheckpointSigner(await generateSigningJwk(`ephemeral-${deps.runtime.newId()}`)));
  const audit = new AuditService({ db: deps.db, clock: deps.runtime.clock, checkpoints });
  const webhooks = new WebhookService({
    db: deps.db,
    runtime: deps.runtime,
    settings: webhookConfig,
  });
  const tlog = new TransparencyLog({ db: deps.db, clock: deps.runtime.clock, checkpoints, origin: deps.tlogOrigin ?? DEFAULT_TLOG_ORIGIN });
  const licenseRequests = new LicenseRequestService({
    db: deps.db,
    runtime: deps.runtime,
    outbox: deps.outbox,
    licenses: new LicenseService({ db: deps.db, runtime: deps.runtime, outbox: deps.outbox }),
    limiter,
    licenseRequestsPerMinute: protection.licenseRequestsPerMinute,
    secretEncryption: webhookConfig.sender.secretEncryption,
  });
  registerLicenseRequestRoutes(app, registry, guards, deps.db, licenseRequests);
  registerAuditRoutes(app, registry, deps.db, guards, audit);
  registerTlogRoutes(app, registry, deps.db, guards, tlog);
  registerWebhookRoutes(app, registry, guards, deps.db, webhooks);
  registerConsoleRoutes(app, registry);
  registerDocsRoutes(app, registry);

  await app.ready();
  return { app, auth, routeTable, audit, tlog, webhooks };
}
