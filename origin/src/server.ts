import { limits } from '@vip/shared-schema';
import Fastify, { type FastifyInstance, type FastifyServerOptions, LogController } from 'fastify';
import type { AccessTokens } from './auth/access-tokens.js';
import { createGuards } from './auth/guard.js';
import type { PasswordHasher } from './auth/passwords.js';
import { registerAuthRoutes } from './auth/routes.js';
import { AuthService } from './auth/service.js';
import type { Database } from './db/client.js';
import type { OutboxSignal } from './edge-sync/signal.js';
import { LOG_REDACTIONS, logEachRequest } from './http/access-log.js';
import { registerDocsRoutes } from './http/docs.js';
import { installErrorHandling } from './http/error-handler.js';
import { echoRequestId, requestIdGenerator } from './http/request-id.js';
import { RouteTable } from './http/route-table.js';
import type { ContractRegistry } from './http/routes.js';
import { registerPlatformRoutes } from './platforms/routes.js';
import { PlatformService } from './platforms/service.js';
import type { Runtime } from './runtime.js';

export interface ServerDeps {
  db: Database;
  tokens: AccessTokens;
  hasher: PasswordHasher;
  runtime: Runtime;
  outbox: OutboxSignal;
  logger: { level: string; stream?: NodeJS.WritableStream };
  trustProxy?: boolean;
}

export interface OriginServer {
  app: FastifyInstance;
  auth: AuthService;
  routeTable: RouteTable;
}

export async function buildServer(deps: ServerDeps): Promise<OriginServer> {
  const options: FastifyServerOptions = {
    logger: {
      level: deps.logger.level,
      redact: { paths: LOG_REDACTIONS, censor: '[redacted]' },
      ...(deps.logger.stream ? { stream: deps.logger.stream } : {}),
    },
    // Our own access log replaces Fastify's two lines per request (which would carry the URL).
    logController: new LogController({ disableRequestLogging: true, requestIdLogLabel: 'request_id' }),
    genReqId: requestIdGenerator(deps.runtime.newId),
    requestIdHeader: false,
    bodyLimit: limits.jsonBodyMaxBytes,
    trustProxy: deps.trustProxy ?? false,
  };
  const app = Fastify(options);
  // JSON only: a text/plain body would otherwise reach the handlers as a string.
  app.removeContentTypeParser('text/plain');
  const routeTable = new RouteTable(app);
  installErrorHandling(app, routeTable);
  echoRequestId(app);
  logEachRequest(app);

  const registry: ContractRegistry = [];
  const guards = createGuards(deps.tokens, deps.runtime.clock);
  const auth = new AuthService({ db: deps.db, hasher: deps.hasher, tokens: deps.tokens, runtime: deps.runtime });
  const platforms = new PlatformService({ db: deps.db, runtime: deps.runtime, outbox: deps.outbox });

  registerAuthRoutes(app, registry, auth, deps.tokens);
  registerPlatformRoutes(app, registry, guards, platforms);
  registerDocsRoutes(app, registry);

  await app.ready();
  return { app, auth, routeTable };
}
