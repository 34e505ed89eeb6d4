import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../testing/origin.js';

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

/** A wildcard route (the tlog tiles, whose path has slashes) is documented as one path parameter. */
const toOpenApiPath = (url: string) => url.replace(/:(\w+)/g, '{$1}').replace(/^\/tlog\/tile\/\*$/, '/tlog/tile/{tile}');

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document that lists every route the origin serves, and nothing else', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    const document = response.json() as { openapi: string; paths: Record<string, Record<string, unknown>> };
    expect(document.openapi).toBe('3.1.0');

    const served = origin.routeTable.routes
      .filter((route) => route.method !== 'HEAD')
      .map((route) => `${route.method} ${toOpenApiPath(route.url)}`)
      .sort();
    const documented = Object.entries(document.paths)
      .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(documented).toEqual(served);
    expect(documented).toContain('DELETE /api/v1/platforms/{platform_id}/api-keys/{key_id}');
  });

  it('documents the problem answers and the security of each operation', async () => {
    const document = (await origin.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const createKey = document.paths['/api/v1/platforms/{platform_id}/api-keys'].post;
    expect(createKey.security).toEqual([{ bearer: [] }]);
    expect(Object.keys(createKey.responses)).toEqual(expect.arrayContaining(['201', '401', '403', '404', '422']));
    expect(document.components.schemas.Problem).toBeDefined();
  });
});

describe('GET /', () => {
  it('points to the reference, which is served where it says', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/' });
    expect(response.statusCode).toBe(200);
    const index = response.json();
    expect(index).toEqual({ service: expect.stringContaining('origin'), docs: '/docs', openapi: '/openapi.json' });
    expect((await origin.app.inject({ method: 'GET', url: index.docs })).statusCode).toBe(200);
  });
});

describe('GET /docs', () => {
  it('is an HTML page naming the routes', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    expect(response.body).toMatch(/^<!doctype html>/);
    expect(response.body).toContain('/api/v1/auth/login');
  });
});
