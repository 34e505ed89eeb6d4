import { PROBLEM_CONTENT_TYPE, problemSchema, readinessSchema } from '@vip/shared-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../testing/origin.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

describe('GET /healthz', () => {
  it('answers 200 ok without credentials', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });
});

describe('GET /readyz', () => {
  it('answers 200 ready once the database answers, leaving out the voiceprint load where no engine runs', async () => {
    const response = await origin.app.inject({ method: 'GET', url: '/readyz' });
    expect(response.statusCode).toBe(200);
    expect(readinessSchema.parse(response.json())).toEqual({ status: 'ready', checks: { database: 'ok' } });
  });

  it('reports how many audio files the voiceprint engine is processing and how many wait', async () => {
    // Only load() is read by the probe; a real engine takes seconds to start.
    const engine = { load: () => ({ running: 2, queued: 5 }) } as unknown as VoiceprintEngine;
    const withEngine = await startTestOrigin({ voiceprint: engine });
    try {
      const response = await withEngine.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ status: 'ready', checks: { database: 'ok', voiceprint: { busy: 2, queued: 5 } } });
    } finally {
      await withEngine.close();
    }
  });

  it('answers 503 unavailable as problem+json when the database is gone, while liveness stays 200', async () => {
    const broken = await startTestOrigin();
    try {
      await broken.database.close();
      const response = await broken.app.inject({ method: 'GET', url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
      expect(response.headers['retry-after']).toBe('1');
      expect(problemSchema.parse(response.json())).toMatchObject({ status: 503, code: 'unavailable', instance: '/readyz' });
      expect(broken.logs.join('')).toContain('database unavailable');

      expect((await broken.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await broken.app.close();
    }
  });
});
