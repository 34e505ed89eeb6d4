import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { configFor } from './config.js';
import type { AppEnv } from './http/context.js';
import { notFound, onError } from './http/errors.js';
import { requestLog } from './http/request-log.js';
import { mountAuditPull } from './routes/audit-pull.js';
import { mountDemo } from './routes/demo.js';
import { mountDocs } from './routes/docs.js';
import { mountHealth } from './routes/health.js';
import { mountInternalSync } from './routes/internal-sync.js';
import { mountJwks } from './routes/jwks.js';
import { mountOpenApi } from './routes/openapi.js';
import { mountPlayground } from './routes/playground.js';
import { mountPreSynthesisCheck } from './routes/pre-synthesis-check.js';
import { mountRedeem } from './routes/redeem.js';
import type { Runtime } from './runtime.js';

const routes = Object.values(edgeRoutes);

const withConfig = createMiddleware<AppEnv>(async (c, next) => {
  c.set('config', configFor(c.env));
  await next();
});

/** The edge Worker's HTTP surface. `runtime` supplies time and ids (pinned in tests). */
export function createApp(runtime: Runtime): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(requestLog(runtime));
  app.use(withConfig);
  mountPreSynthesisCheck(app);
  mountDemo(app);
  mountRedeem(app);
  mountJwks(app);
  mountInternalSync(app);
  mountAuditPull(app);
  mountOpenApi(app);
  mountDocs(app);
  mountHealth(app);
  mountPlayground(app);
  app.onError(onError);
  // Edge paths have no parameters, so a path names its route exactly.
  app.notFound(notFound((path) => routes.filter((route) => route.path === path).map((route) => route.method.toUpperCase())));
  return app;
}
