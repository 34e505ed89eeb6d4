import { randomUUID } from 'node:crypto';
import { createdApiKeySchema, pathOf, platformSchema } from '@vip/shared-schema';
import { createApiKeyRoute, createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import { bearer, loggedIn, type TestOrigin } from './origin.js';

/** A platform and a live key, made through the admin routes of `on`. */
export async function platformKey(on: TestOrigin, label = 'Platform') {
  const admin = await loggedIn(on, 'admin');
  const name = `${label} ${randomUUID().slice(0, 8)}`;
  const created = await on.app.inject({
    method: 'POST',
    url: pathOf(createPlatformRoute),
    headers: bearer(admin.accessToken),
    payload: { name },
  });
  const platform = platformSchema.parse(created.json());
  const key = await on.app.inject({
    method: 'POST',
    url: pathOf(createApiKeyRoute, { platform_id: platform.platform_id }),
    headers: bearer(admin.accessToken),
    payload: {},
  });
  return { name, platformId: platform.platform_id, apiKey: createdApiKeySchema.parse(key.json()).api_key };
}
