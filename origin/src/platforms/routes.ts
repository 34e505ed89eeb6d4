import {
  createApiKeyRoute,
  createPlatformRoute,
  listApiKeysRoute,
  listPlatformsRoute,
  revokeApiKeyRoute,
} from '@vip/shared-schema/routes/origin/platforms';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { PlatformService } from './service.js';

export function registerPlatformRoutes({ app, registry, guards }: RouteKit, platforms: PlatformService): void {
  addRoute(app, registry, createPlatformRoute, {
    guards: guards.admin,
    handler: ({ body }) => platforms.createPlatform(body.name),
  });

  addRoute(app, registry, listPlatformsRoute, {
    guards: guards.admin,
    handler: () => platforms.listPlatforms(),
  });

  addRoute(app, registry, createApiKeyRoute, {
    guards: guards.admin,
    handler: ({ params }) => platforms.createApiKey(params.platform_id),
  });

  addRoute(app, registry, listApiKeysRoute, {
    guards: guards.admin,
    handler: ({ params }) => platforms.listApiKeys(params.platform_id),
  });

  addRoute(app, registry, revokeApiKeyRoute, {
    guards: guards.admin,
    handler: ({ params }) => platforms.revokeApiKey(params.platform_id, params.key_id),
  });
}
