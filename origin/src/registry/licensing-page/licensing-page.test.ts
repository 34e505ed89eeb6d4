import { INTENDED_USES, LICENSE_DESCRIPTION_MAX, LICENSE_REPRESENTATIONS, PROBLEM_CONTENT_TYPE, pathOf } from '@vip/shared-schema';
import { listVoicesRoute } from '@vip/shared-schema/routes/origin/voices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggedIn, startTestOrigin, type TestOrigin } from '../../testing/origin.js';
import { insertTestVoice } from '../../testing/voices.js';

let origin: TestOrigin;
let ownerId: string;
beforeAll(async () => {
  origin = await startTestOrigin();
  ownerId = (await loggedIn(origin)).userId;
});
afterAll(() => origin?.close());

const page = (query: string) => origin.app.inject({ method: 'GET', url: `/licensing${query}` });

describe('GET /licensing', () => {
  it('shows the voice, the uses on offer and how to obtain a licence, without credentials', async () => {
    const voiceId = await insertTestVoice(origin.database.db, ownerId, { name: 'Ada Narrates' });
    const response = await page(`?voice_id=${voiceId}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/html/);
    expect(response.body).toContain('Ada Narrates');
    expect(response.body).toContain(voiceId);
    for (const use of INTENDED_USES) expect(response.body).toContain(`<code>${use}</code>`);
    expect(response.body).toContain(`POST /api/v1/voices/${voiceId}/license-requests`);
    expect(response.body).toContain('license.granted');
    // The terms a request states, with the limits shared-schema sets.
    for (const field of ['"description"', '"represented_by"', '"compensation"', 'license_terms_sha256', 'at most ten years'])
      expect(response.body).toContain(field);
    for (const representation of LICENSE_REPRESENTATIONS) expect(response.body).toContain(`<code>${representation}</code>`);
    expect(response.body).toContain(`up to ${LICENSE_DESCRIPTION_MAX} characters`);
  });

  it('shows nothing about the owner, the consent or existing licences', async () => {
    const voiceId = await insertTestVoice(origin.database.db, ownerId, { consentStatus: 'withdrawn' });
    const { body } = await page(`?voice_id=${voiceId}`);
    expect(body).not.toContain(ownerId);
    expect(body).not.toContain('withdrawn');
    expect(body).not.toContain('test-model');
  });

  it('escapes the voice name', async () => {
    const voiceId = await insertTestVoice(origin.database.db, ownerId, { name: `<script>alert("x")</script> & 'co'` });
    const { body } = await page(`?voice_id=${voiceId}`);
    expect(body).not.toContain('<script>');
    expect(body).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;');
  });

  it('answers a browser asking for an unknown voice with an HTML page, an API client with problem+json', async () => {
    const url = `/licensing?voice_id=${crypto.randomUUID()}`;
    const browserAccept = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
    const browser = await origin.app.inject({ method: 'GET', url, headers: { accept: browserAccept } });
    expect(browser.statusCode).toBe(404);
    expect(browser.headers['content-type']).toMatch(/^text\/html/);
    expect(browser.body).toMatch(/^<!doctype html>/);
    expect(browser.body).toContain('No voice is registered under this id.');
    expect(browser.body).toContain(String(browser.headers['x-request-id']));
    for (const accept of ['application/json', 'application/problem+json, text/html', '*/*']) {
      const client = await origin.app.inject({ method: 'GET', url, headers: { accept } });
      expect(client.statusCode).toBe(404);
      expect(client.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    }
    // A JSON route stays JSON for a browser too.
    const api = await origin.app.inject({ method: 'GET', url: pathOf(listVoicesRoute), headers: { accept: browserAccept } });
    expect(api.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  });

  it('answers an unknown voice with a 404 problem and a malformed or missing id with a 422 problem', async () => {
    const unknown = await page(`?voice_id=${crypto.randomUUID()}`);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
    expect(unknown.json().code).toBe('not_found');
    for (const query of ['?voice_id=%3Cscript%3E', '']) {
      const response = await page(query);
      expect(response.statusCode).toBe(422);
      expect(response.json().errors).toEqual([{ field: 'query.voice_id', message: expect.any(String) }]);
      expect(response.body).not.toContain('<script>');
    }
  });
});
