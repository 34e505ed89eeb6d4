import { BIOMETRIC_CONSENT_STATEMENT, consentSchema, pathOf } from '@vip/shared-schema';
import { grantBiometricConsentRoute } from '@vip/shared-schema/routes/origin/biometric-consent';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { voices } from '../db/schema.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { bearer, type loggedIn, startTestOrigin, type TestOrigin } from './origin.js';
import { EMBEDDING_LIKE } from './voiceprint.js';

type Owner = Awaited<ReturnType<typeof loggedIn>>;

/**
 * One origin with a voiceprint engine for the test file that calls this (at its top level): started
 * before its tests with the engine `startEngine` gives, then handed to `whenStarted` (for the file's
 * own bindings and setup); closed after them. After each test it checks that no response body of a
 * request sent through the returned `inject`, and no log line, held an embedding, and deletes the
 * voices: voices of unrelated tests would otherwise meet in the 1:N search (an uncalibrated model
 * matches anyone).
 */
export function voiceOriginPerTestFile(
  startEngine: () => Promise<VoiceprintEngine>,
  whenStarted: (started: { engine: VoiceprintEngine; origin: TestOrigin }) => Promise<void> | void,
) {
  let engine: VoiceprintEngine | undefined;
  let origin: TestOrigin | undefined;
  /** Response bodies of the running test, scanned for embeddings after it. */
  const bodies: string[] = [];

  beforeAll(async () => {
    engine = await startEngine();
    origin = await startTestOrigin({ voiceprint: engine });
    await whenStarted({ engine, origin });
  });
  afterAll(async () => {
    await origin?.close();
    await engine?.close();
  });
  afterEach(async () => {
    for (const body of bodies.splice(0)) expect(body).not.toMatch(EMBEDDING_LIKE);
    for (const line of origin!.logs) expect(line).not.toMatch(EMBEDDING_LIKE);
    await origin!.database.db.delete(voices);
  });

  async function inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    const response = await origin!.app.inject(options);
    bodies.push(response.body);
    return response;
  }

  /** The owner's biometric consent to enroll one voice: its id. */
  async function grantBiometricConsent(owner: Owner): Promise<string> {
    const response = await inject({
      method: 'POST',
      url: pathOf(grantBiometricConsentRoute),
      headers: bearer(owner.accessToken),
      payload: { type: 'biometric', statement_version: BIOMETRIC_CONSENT_STATEMENT.version, accepted: true },
    });
    expect(response.statusCode, response.body).toBe(201);
    return consentSchema.parse(response.json()).consent_id;
  }

  return { inject, grantBiometricConsent };
}
