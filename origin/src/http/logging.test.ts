import { pathOf, routerPath } from '@vip/shared-schema';
import { loginRoute, refreshRoute, registerRoute } from '@vip/shared-schema/routes/origin/auth';
import { createApiKeyRoute, createPlatformRoute, listApiKeysRoute, listPlatformsRoute } from '@vip/shared-schema/routes/origin/platforms';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, loggedIn, PASSWORD, startTestOrigin, type TestOrigin, uniqueEmail } from '../testing/origin.js';

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

describe('logs', () => {
  it('never contain a password, a token, an API key or its hash, whatever the request', async () => {
    const email = uniqueEmail('logged');
    const secrets: string[] = [PASSWORD];
    await origin.app.inject({ method: 'POST', url: pathOf(registerRoute), payload: { email, password: PASSWORD } });
    const login = (await origin.app.inject({ method: 'POST', url: pathOf(loginRoute), payload: { email, password: PASSWORD } })).json();
    secrets.push(login.access_token, login.refresh_token);
    await origin.app.inject({ method: 'POST', url: pathOf(loginRoute), payload: { email, password: 'wrong-password-in-log?' } });
    secrets.push('wrong-password-in-log?');
    await origin.app.inject({ method: 'POST', url: pathOf(refreshRoute), payload: { refresh_token: login.refresh_token } });

    const admin = await loggedIn(origin, 'admin');
    secrets.push(admin.accessToken);
    const platform = (
      await origin.app.inject({
        method: 'POST',
        url: pathOf(createPlatformRoute),
        headers: bearer(admin.accessToken),
        payload: { name: 'Logged platform' },
      })
    ).json();
    const created = (
      await origin.app.inject({
        method: 'POST',
        url: pathOf(createApiKeyRoute, { platform_id: platform.platform_id }),
        headers: bearer(admin.accessToken),
        payload: {},
      })
    ).json();
    secrets.push(created.api_key);
    // A key sent where it does not belong, and a malformed body carrying a secret, must not leak either.
    await origin.app.inject({
      method: 'GET',
      url: pathOf(listPlatformsRoute),
      headers: { 'x-api-key': created.api_key, authorization: `Bearer ${created.api_key}` },
    });
    await origin.app.inject({
      method: 'POST',
      url: pathOf(loginRoute),
      payload: `{"password":"${PASSWORD}"`,
      headers: { 'content-type': 'application/json' },
    });

    const captured = origin.logs.join('');
    expect(captured.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(captured).not.toContain(secret);
  });

  it('write one structured line per request: id, method, route, status, duration', async () => {
    origin.logs.length = 0;
    await origin.app.inject({
      method: 'GET',
      url: pathOf(listApiKeysRoute, { platform_id: '3f1c1b9e-0000-4000-8000-000000000000' }),
      headers: { 'x-request-id': 'log-line-test-1' },
    });
    const lines = origin.logs.map((line) => JSON.parse(line));
    const requestLines = lines.filter((line) => line.request_id === 'log-line-test-1');
    expect(requestLines).toHaveLength(1);
    expect(requestLines[0]).toMatchObject({
      msg: 'request',
      method: 'GET',
      route: routerPath(listApiKeysRoute),
      status: 401,
      ms: expect.any(Number),
    });
  });
});
