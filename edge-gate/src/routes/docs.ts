import { renderDocsPage, routerPath, type ServiceIndex } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { EDGE_TITLE, edgeOpenApiDocument } from './openapi.js';

export function mountDocs(app: Hono<AppEnv>) {
  app.get(routerPath(edgeRoutes.docs), (c) => c.html(renderDocsPage(edgeOpenApiDocument(c.get('config')))));
  app.get(routerPath(edgeRoutes.index), (c) =>
    c.json({
      service: EDGE_TITLE,
      docs: edgeRoutes.docs.path,
      openapi: edgeRoutes.openApi.path,
    } satisfies ServiceIndex),
  );
}
