import { ProblemError } from '@vip/shared-schema';
import { createMiddleware } from 'hono/factory';
import type { AppEnv } from '../http/context.js';
import { userFromAccessToken } from './access-token.js';
import { platformFromApiKey } from './api-key.js';

const BEARER = /^Bearer[ ]+([A-Za-z0-9._~+/-]+=*)$/i;

/** CF-Connecting-IP is set by Cloudflare (and by wrangler dev); it is the only client address we trust. */
const clientIp = (header: string | undefined) => header ?? 'unknown';

/**
 * Resolves the caller from `X-API-Key` or `Authorization: Bearer`. `required`: no credential is a
 * 401; `optional` (Variant B's public gate): no credential makes an anonymous caller. A credential
 * that is present but wrong is a 401 in both modes.
 */
export const authenticate = (mode: 'required' | 'optional') =>
  createMiddleware<AppEnv>(async (c, next) => {
    const apiKey = c.req.header('x-api-key');
    const authorization = c.req.header('authorization');
    if (apiKey !== undefined) {
      c.set('caller', await platformFromApiKey(c.env.EDGE_INDEX, apiKey));
    } else if (authorization !== undefined) {
      const token = BEARER.exec(authorization)?.[1];
      if (!token) throw new ProblemError('invalid_token', 'Use Authorization: Bearer <token>.');
      c.set('caller', await userFromAccessToken(token, c.get('config').originUrl, c.get('runtime').now()));
    } else if (mode === 'required') {
      throw new ProblemError('authentication_required', 'Send X-API-Key or Authorization: Bearer.', {
        headers: { 'www-authenticate': 'Bearer realm="vip"' },
      });
    } else {
      c.set('caller', { kind: 'anonymous', ip: clientIp(c.req.header('cf-connecting-ip')) });
    }
    await next();
  });

const credentialRequired = authenticate('required');
const credentialOptional = authenticate('optional');

/** The gate and redemption: Variant A requires a credential; Variant B is public, credentials optional. */
export const gateAuthentication = createMiddleware<AppEnv>((c, next) =>
  (c.get('config').variant === 'A' ? credentialRequired : credentialOptional)(c, next),
);
