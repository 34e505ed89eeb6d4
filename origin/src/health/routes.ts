import { originLivenessRoute, originReadinessRoute } from '@vip/shared-schema/routes/origin/health';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { HealthService } from './service.js';

export function registerHealthRoutes({ app, registry }: RouteKit, health: HealthService, instanceId: string | undefined): void {
  addRoute(app, registry, originLivenessRoute, { handler: () => ({ status: 'ok' as const, instance: instanceId }) });
  addRoute(app, registry, originReadinessRoute, { handler: () => health.readiness() });
}
