import { Hono } from 'hono';
import { createMiddleware } from 'hono/factory';
import { configFor } from './config.js';
import type { AppEnv } from './http/context.js';
import { notFound, onError } from './http/errors.js';
import { MountRecord } from './http/mount-record.js';
import { requestLog } from './http/request-log.js';
import { transportLimits } from './http/transport-limits.js';
import { mountAuditLookup } from './routes/audit-lookup.js';
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

const withConfig = createMiddleware<AppEnv>(async (c, next) => {
  c.set('config', configFor(c.env));
  await next();
});

/** The edge Worker's HTTP surface. `runtime` supplies time and ids (pinned in tests). */
export function createApp(runtime: Runtime): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use(requestLog(runtime));
  app.use(transportLimits);
  app.use(withConfig);
  const mounts = new MountRecord(app);
  mountPreSynthesisCheck(mounts);
  mountDemo(mounts);
  mountRedeem(mounts);
  mountJwks(mounts);
  mountInternalSync(mounts);
  mountAuditPull(mounts);
  mountAuditLookup(mounts);
  mountOpenApi(mounts);
  mountDocs(mounts);
  mountHealth(mounts);
  mountPlayground(mounts);
  app.onError(onError);
  app.notFound(notFound((path) => mounts.methodsAt(path)));
  return app;
}
