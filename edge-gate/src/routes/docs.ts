import { renderDocsPage, routerPath } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import type { AppEnv } from '../http/context.js';
import { edgeOpenApiDocument } from './openapi.js';

export function mountDocs(app: Hono<AppEnv>) {
  app.get(routerPath(edgeRoutes.docs), (c) => c.html(renderDocsPage(edgeOpenApiDocument(c.get('config')))));
}
