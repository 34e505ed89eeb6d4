import { buildOpenApiDocument, renderDocsPage } from '@vip/shared-schema';
import { originDocsRoute, originIndexRoute, originOpenApiRoute } from '@vip/shared-schema/routes/origin-identity';
import { addRoute, type RouteKit } from './routes.js';

const INFO = {
  title: 'Voice Identity Protection Service: origin',
  version: '1.0.0',
  description: 'Accounts, platforms and API keys, voices, consents, licences, detection, audit and webhooks.',
};

/** Registered last, so the document lists every contract the app serves; built once, on first request. */
export function registerDocsRoutes({ app, registry }: RouteKit): void {
  let document: Record<string, unknown> | undefined;
  let page: string | undefined;
  const openApi = () => {
    document ??= buildOpenApiDocument(INFO, registry);
    return document;
  };
  addRoute(app, registry, originOpenApiRoute, { handler: () => openApi() });
  addRoute(app, registry, originIndexRoute, {
    handler: () => ({ service: INFO.title, docs: originDocsRoute.path, openapi: originOpenApiRoute.path }),
  });
  addRoute(app, registry, originDocsRoute, {
    handler: () => {
      page ??= renderDocsPage(openApi());
      return page;
    },
  });
}
