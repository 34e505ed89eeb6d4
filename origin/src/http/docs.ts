import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { buildOpenApiDocument, docsSecurityHeaders, renderDocsPage } from '@vip/shared-schema';
import { originDocsRoute, originIndexRoute, originOpenApiRoute } from '@vip/shared-schema/routes/origin/http';
import { docsPageRoutes } from '@vip/shared-schema/routes/pages';
import { script, style } from './docs-assets.generated.js';
import { addRoute, type RouteKit } from './routes.js';

const INFO = {
  title: 'Voice Identity Protection Service: origin',
  version: '1.0.0',
  description: 'Accounts, platforms and API keys, voices, consents, licences, detection, audit and webhooks.',
};

/** Swagger UI's files, read once from the installed package: what the origin's and the edge's `/docs` load. */
function rendererFile(name: string): string {
  return readFileSync(createRequire(import.meta.url).resolve(`swagger-ui-dist/${name}`), 'utf8');
}

/** Registered last, so the document lists every contract the app serves; built once, on first request. */
export function registerDocsRoutes({ app, registry }: RouteKit): void {
  let document: Record<string, unknown> | undefined;
  const openApi = () => {
    document ??= buildOpenApiDocument(INFO, registry);
    return document;
  };
  addRoute(app, registry, originOpenApiRoute, { handler: () => openApi() });
  addRoute(app, registry, originIndexRoute, {
    handler: () => ({ service: INFO.title, docs: originDocsRoute.path, openapi: originOpenApiRoute.path }),
  });

  const page = renderDocsPage({ title: INFO.title, assetOrigin: '', openApiPath: originOpenApiRoute.path });
  const renderer = rendererFile('swagger-ui-bundle.js');
  const rendererStyle = rendererFile('swagger-ui.css');
  // A scope of its own, so the page headers go with the page and its assets only.
  app.register(async (scope) => {
    scope.addHook('onSend', async (_request, reply) => {
      reply.headers(docsSecurityHeaders(''));
    });
    addRoute(scope, registry, originDocsRoute, { handler: () => page });
    addRoute(scope, registry, docsPageRoutes.renderer, { handler: () => renderer });
    addRoute(scope, registry, docsPageRoutes.rendererStyle, { handler: () => rendererStyle });
    addRoute(scope, registry, docsPageRoutes.script, { handler: () => script });
    addRoute(scope, registry, docsPageRoutes.style, { handler: () => style });
  });
}
