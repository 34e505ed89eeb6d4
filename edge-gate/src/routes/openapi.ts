import { buildOpenApiDocument, type RouteContract, routerPath } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { Hono } from 'hono';
import type { EdgeConfig } from '../config.js';
import type { AppEnv } from '../http/context.js';

/** Variant B's gate is public with optional credentials; the document says what is deployed. */
export function documentedRoutes(config: EdgeConfig): RouteContract[] {
  const gate: RouteContract =
    config.variant === 'B' ? { ...edgeRoutes.preSynthesisCheck, auth: ['apiKey', 'bearer', 'none'] } : edgeRoutes.preSynthesisCheck;
  return [gate, ...Object.values(edgeRoutes).filter((route) => route !== edgeRoutes.preSynthesisCheck)];
}

export const EDGE_TITLE = 'Voice Identity Protection Service: edge gate';

export function edgeOpenApiDocument(config: EdgeConfig) {
  return buildOpenApiDocument(
    {
      title: EDGE_TITLE,
      version: '1.0.0',
      description: `The pre-synthesis consent gate, its demo and authorization-token redemption. Deployed variant: ${config.variant}.`,
    },
    documentedRoutes(config),
  );
}

export function mountOpenApi(app: Hono<AppEnv>) {
  app.get(routerPath(edgeRoutes.openApi), (c) => c.json(edgeOpenApiDocument(c.get('config'))));
}
