import { loginRoute } from '@vip/shared-schema/routes/origin/auth';
import { createApiKeyRoute } from '@vip/shared-schema/routes/origin/platforms';
import { enrollVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
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
    const createKey = document.paths[createApiKeyRoute.path].post;
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
  it('is a page for the renderer, with no inline code, whose assets are served from the installed packages', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/docs' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('text/html');
    const csp = String(response.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toContain('unsafe');
    const html = response.body;
    expect(html).toMatch(/^<!doctype html>/);
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    expect(html).toContain('data-openapi="/openapi.json"');
    const assets = [...html.matchAll(/(?:src|href)="(\/docs\/assets\/[^"]+)"/g)].map((match) => match[1]!);
    expect(assets.sort()).toEqual([
      '/docs/assets/docs.css',
      '/docs/assets/docs.js',
      '/docs/assets/swagger-ui-bundle.js',
      '/docs/assets/swagger-ui.css',
    ]);
    for (const asset of assets) {
      const served = await origin.app.inject({ method: 'GET', url: asset });
      expect(served.statusCode).toBe(200);
      expect(served.headers['content-type']).toMatch(asset.endsWith('.js') ? /^text\/javascript/ : /^text\/css/);
      // The edge's page loads these from the origin.
      expect(served.headers['cross-origin-resource-policy']).toBe('cross-origin');
    }
    const renderer = await origin.app.inject({ method: 'GET', url: '/docs/assets/swagger-ui-bundle.js' });
    expect(renderer.body).toContain('SwaggerUIBundle');
  });

  it('renders from a document whose operations carry their fields, enums and problem codes, with contents in Markdown', async () => {
    const document = (await origin.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const enroll = document.paths[enrollVoiceRoute.path].post;
    expect(Object.keys(enroll.requestBody.content['multipart/form-data'].schema.properties)).toEqual(
      expect.arrayContaining(['audio', 'name', 'consent_id']),
    );
    expect(enroll.responses['422'].description).toContain('- `too_short`: ');
    expect(document.info.description).toContain('<a href="#operations-tag-voices">voices</a>');
    // The problem codes are drawn after the operations, from their own part of the document.
    expect(document.info.description).not.toContain('identity_conflict');
    expect(document['x-problem-codes']).toMatch(/\| `identity_conflict` \| 409 \|/);
  });

  it('explains each field in a line and shows an example of each request and answer', async () => {
    const document = (await origin.app.inject({ method: 'GET', url: '/openapi.json' })).json();
    const login = document.paths[loginRoute.path].post;
    expect(login.requestBody.content['application/json'].example).toEqual({ email: 'owner@example.com', password: expect.any(String) });
    expect(login.responses['200'].content['application/json'].example).toMatchObject({ token_type: 'bearer', email: 'owner@example.com' });
    expect(login.responses['401'].content['application/problem+json'].example).toMatchObject({ status: 401, code: 'invalid_credentials' });
    const licence = document.components.schemas.License.properties;
    expect(licence.expires_at).toEqual({ type: 'string', format: 'date-time', description: expect.stringContaining('licence ends') });
    expect(licence.license_id).toEqual({ type: 'string', format: 'uuid', description: 'Id of the licence.' });
  });
});

describe('GET /favicon.ico', () => {
  it('serves the icon browsers ask for on their own', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/favicon.ico' });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('image/svg+xml');
    expect(response.body).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"/);
  });
});
