import type { VoiceprintEngine } from '../voiceprint/index.js';
import { loggedIn, type TestOrigin } from './origin.js';
import { voiceOriginPerTestFile } from './voice-origin.js';
import { speakerRecordings, startReviewBandEngine } from './voiceprint.js';
import { insertVoiceAtCosine } from './voices.js';

/**
 * The voice origin of the tests about the identity-conflict review band (voices/reviews.test.ts,
 * voices/re-enrollment.test.ts), one per test file: importing this module starts it (as
 * testing/voice-origin.ts does) with the engine's conflict points fixed at REVIEW and STRICT and an
 * administrator. Another owner's voice is stored with a voiceprint at a chosen cosine from `probe`,
 * what `recordings()` embed to (the engine is deterministic), so each test lands exactly where it
 * means to.
 */
export const REVIEW = 0.6;
export const STRICT = 0.8;
export const recordings = () => speakerRecordings('so762:SPEAKER9622', 0, 3);

type Owner = Awaited<ReturnType<typeof loggedIn>>;

export let engine: VoiceprintEngine;
export let origin: TestOrigin;
export let admin: Owner;
let probe: Float32Array;

export const { inject, grantBiometricConsent } = voiceOriginPerTestFile(
  () => startReviewBandEngine({ review: REVIEW, strict: STRICT }),
  async (started) => {
    ({ engine, origin } = started);
    admin = await loggedIn(origin, 'admin');
    probe = (await engine.embedMany(recordings())).embedding;
  },
);

/** A voice of `owner` under the current model, its voiceprint at `cosine` from the probe: its id. */
export const voiceAtCosine = (owner: Owner, cosine: number) =>
  insertVoiceAtCosine(origin.database.db, owner.userId, engine.model.name, probe, cosine);
