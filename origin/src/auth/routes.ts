import {
  changePasswordRoute,
  jwksRoute,
  loginRoute,
  logoutRoute,
  refreshRoute,
  registerRoute,
} from '@vip/shared-schema/routes/origin/auth';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { AccessTokens } from './access-tokens.js';
import { principalOf } from './guard.js';
import type { AuthService } from './service.js';

export function registerAuthRoutes({ app, registry, guards }: RouteKit, auth: AuthService, tokens: AccessTokens): void {
  addRoute(app, registry, registerRoute, {
    handler: async ({ body }, request, reply) => {
      reply.headers(await auth.admitRegistration(request.ip));
      return auth.register(body.email, body.password);
    },
  });

  addRoute(app, registry, loginRoute, {
    handler: ({ body }, request) => auth.login(body.email, body.password, request.ip),
  });

  addRoute(app, registry, refreshRoute, {
    handler: ({ body }) => auth.refresh(body.refresh_token),
  });

  addRoute(app, registry, logoutRoute, {
    handler: ({ body }) => auth.logout(body.refresh_token),
  });

  addRoute(app, registry, changePasswordRoute, {
    guards: [guards.bearer],
    handler: ({ body }, request) => auth.changePassword(principalOf(request).userId, body.current_password, body.new_password, request.ip),
  });

  addRoute(app, registry, jwksRoute, {
    handler: () => tokens.jwks() as { keys: { kty: string; crv: string; x: string; kid: string; alg: string; use: string }[] },
  });
}
