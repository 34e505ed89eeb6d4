import { buildOpenApiDocument, type RouteContract } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import type { EdgeConfig } from '../config.js';
import type { MountRecord } from '../http/mount-record.js';

/** Variant B's gate is public with optional credentials; the document says what is deployed. */
function documentedRoutes(config: EdgeConfig, served: readonly RouteContract[]): RouteContract[] {
  return served.map((route) =>
    route === edgeRoutes.preSynthesisCheck && config.variant === 'B' ? { ...route, auth: ['apiKey', 'bearer', 'none'] } : route,
  );
}

export const EDGE_TITLE = 'Voice Identity Protection Service: edge gate';

/** The document of the routes `served` (the mount record's), as the deployed variant serves them. */
export function edgeOpenApiDocument(config: EdgeConfig, served: readonly RouteContract[]) {
  return buildOpenApiDocument(
    {
      title: EDGE_TITLE,
      version: '1.0.0',
      description: `The pre-synthesis consent gate, its demo and authorization-token redemption. Deployed variant: ${config.variant}.`,
    },
    documentedRoutes(config, served),
  );
}

export function mountOpenApi(mounts: MountRecord) {
  mounts.serve(edgeRoutes.openApi, (c) => c.json(edgeOpenApiDocument(c.get('config'), mounts.contracts)));
}
