import { createHash } from 'node:crypto';
import { consentChallengeSchema, limits, pathOf, SPOKEN_CONSENT_STATEMENT, SPOKEN_CONSENT_STATEMENTS } from '@vip/shared-schema';
import { auditReceiptRoute } from '@vip/shared-schema/routes/origin/audit';
import { grantBiometricConsentRoute } from '@vip/shared-schema/routes/origin/biometric-consent';
import { createSpokenConsentChallengeRoute, spokenConsentRecordingRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import { deleteVoiceRoute, enrollVoiceRoute, reenrollVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { signedWithAssertions } from '@vip/shared-schema/testing/hostile-files';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { markPcm, newWatermarkId, WATERMARK_ALGORITHM } from '@vip/shared-schema/watermark/index';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { auditEntries, biometricConsents, consentChallenges, spokenConsentRecordings, voiceEmbeddings, voices } from '../db/schema.js';
import { pcm16Wav } from '../testing/fixtures.js';
import { bearer, CORPUS_SPEAKERS_SPOKEN_CONSENT, loggedIn, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import {
  challengeFor as challengeForOrigin,
  RECORDED_CONSENT,
  recordedConsent,
  recordedConsentEnrollment,
  SAYABLE_PHRASE,
} from '../testing/recorded-consent.js';
import {
  SYNTHETIC_VOICES,
  type SyntheticVoice,
  syntheticConsent,
  syntheticConsentSamples,
  syntheticEnrollment,
} from '../testing/synthetic-consent.js';
import { engine, enroll, grantBiometricConsent, inject, origin } from '../testing/voice-routes.js';
import { audioForm, silentWav, speakerRecordings } from '../testing/voiceprint.js';
import { insertEnrolledVoice } from '../testing/voices.js';
import calibration from './calibration.json' with { type: 'json' };
import { PHRASE_WORDS, spokenWords } from './consent-words.js';

type Owner = Awaited<ReturnType<typeof loggedIn>>;

const challenge = async (owner: Owner, target: TestOrigin = origin) =>
  consentChallengeSchema.parse(
    (
      await target.app.inject({ method: 'POST', url: pathOf(createSpokenConsentChallengeRoute), headers: bearer(owner.accessToken) })
    ).json(),
  );

/** 30 s of speech from three recordings of one speaker, the enrollment audio of these tests. */
const ENROLLMENT = () => speakerRecordings('so762:SPEAKER9622', 0, 3);
/** Another recording of the same speaker: the right voice, but a sentence of the corpus, not the statement. */
const SAME_VOICE_OTHER_WORDS = () => speakerRecordings('so762:SPEAKER9622', 3, 1)[0]!;

/**
 * An enrollment with a spoken consent embeds the enrollment and the consent, reads the watermark and
 * decodes the words (two searches): a second or two of CPU, and on a loaded shared machine
 * several times the default test timeout.
 */
const SPEECH_TIMEOUT_MS = 180_000;

const challengeFor = (owner: Owner, phrase: string) => challengeForOrigin(origin, owner, phrase);

const RECORDED_STATEMENT = SPOKEN_CONSENT_STATEMENTS[RECORDED_CONSENT.statementVersion];

/** Nothing of the attempt is kept: no voice, the consent unused, the challenge unspent. */
async function expectNothingStored(owner: Owner, consentId: string, challengeId: string) {
  const { db } = origin.database;
  expect(await db.select().from(voices).where(eq(voices.ownerId, owner.userId))).toEqual([]);
  const [consent] = await db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
  expect(consent).toMatchObject({ voiceId: null, spokenEvidence: null });
  const [row] = await db.select().from(consentChallenges).where(eq(consentChallenges.id, challengeId));
  expect(row?.usedAt ?? null).toBeNull();
}

describe('POST /api/v1/consents/challenges', () => {
  it('issues the statement and a fresh random phrase of digits, bound to the caller, valid for minutes', async () => {
    const owner = await loggedIn(origin);
    const before = Date.now();
    const first = await challenge(owner);
    const second = await challenge(owner);
    expect(first).toMatchObject({
      statement: SPOKEN_CONSENT_STATEMENT.text,
      statement_version: SPOKEN_CONSENT_STATEMENT.version,
      language: 'en',
    });
    // New enrollments read the statement that states the consent (docs/DECISIONS.md#spoken-consent-statement-spoken-en-3).
    expect(first.statement_version).toBe('spoken-en-3');
    expect(first.phrase.split(' ')).toHaveLength(limits.consentPhraseWords);
    for (const word of first.phrase.split(' ')) expect(PHRASE_WORDS).toContain(word);
    expect(second.challenge_id).not.toBe(first.challenge_id);
    expect(Date.parse(first.expires_at) - before).toBeGreaterThanOrEqual(limits.consentChallengeTtlSeconds * 1000 - 1000);
    const [row] = await origin.database.db.select().from(consentChallenges).where(eq(consentChallenges.id, first.challenge_id));
    expect(row).toMatchObject({ ownerId: owner.userId, phrase: first.phrase, usedAt: null });
  });

  it('needs a Bearer token', async () => {
    expectProblem(await inject({ method: 'POST', url: pathOf(createSpokenConsentChallengeRoute) }), 401, 'authentication_required');
  });
});

describe('POST /api/v1/voices/enroll with a spoken consent', () => {
  it(
    "enrolls a voice whose speaker read the statement and the phrase (a real, accented speaker answering a challenge of the earlier statement): evidence with that statement's version in the consent record, the recording kept and downloadable by its owner only, an audit entry; erasure deletes the recording",
    async () => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const issued = await challengeFor(owner, SAYABLE_PHRASE);
      expect(issued.phrase).toBe(SAYABLE_PHRASE);
      const recording = recordedConsent(issued.phrase);
      const answer = await enroll(
        owner,
        { audio: recordedConsentEnrollment(), spoken_consent: recording },
        { name: 'Spoken', consent_id: consentId, challenge_id: issued.challenge_id },
      );
      expect(answer.statusCode, answer.body).toBe(201);
      const voiceId = answer.json().voice_id as string;
      expect(answer.body).not.toContain('recording_sha256');

      const [consent] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
      expect(consent?.spokenEvidence).toMatchObject({
        challenge_id: issued.challenge_id,
        statement_version: RECORDED_CONSENT.statementVersion,
        phrase: SAYABLE_PHRASE,
        heard: `${spokenWords(RECORDED_STATEMENT.text).join(' ')} ${SAYABLE_PHRASE}`,
        phrase_wrong_words: 0,
        recording_sha256: createHash('sha256').update(recording).digest('hex'),
      });
      expect(consent?.spokenEvidence?.statement_score).toBeGreaterThanOrEqual(calibration.statement.min_score);
      expect(consent?.spokenEvidence?.speaker_similarity).toBeGreaterThanOrEqual(consent!.spokenEvidence!.speaker_threshold);
      const [challengeRow] = await origin.database.db.select().from(consentChallenges).where(eq(consentChallenges.id, issued.challenge_id));
      expect(challengeRow?.usedAt).not.toBeNull();

      const download = await inject({
        method: 'GET',
        url: pathOf(spokenConsentRecordingRoute, { voice_id: voiceId }),
        headers: bearer(owner.accessToken),
      });
      expect(download.statusCode).toBe(200);
      expect(download.headers['content-type']).toBe('application/octet-stream');
      expect(Buffer.compare(download.rawPayload, Buffer.from(recording))).toBe(0);
      const stranger = await loggedIn(origin);
      expectProblem(
        await inject({
          method: 'GET',
          url: pathOf(spokenConsentRecordingRoute, { voice_id: voiceId }),
          headers: bearer(stranger.accessToken),
        }),
        404,
        'not_found',
      );

      while ((await origin.audit.appendPending()).more);
      await origin.tlog.signCheckpoint();
      const entries = await origin.database.db.select().from(auditEntries).where(eq(auditEntries.voiceId, voiceId));
      const verified = entries.map((entry) => JSON.parse(entry.entryJson)).find((entry) => entry.kind === 'spoken_consent.verified');
      expect(verified).toMatchObject({ caller_id: owner.userId, reason: `statement_version ${RECORDED_CONSENT.statementVersion}` });
      const receipt = await inject({
        method: 'GET',
        url: pathOf(auditReceiptRoute, { check_id: verified.check_id }),
        headers: bearer(owner.accessToken),
      });
      expect(receipt.statusCode, receipt.body).toBe(200);

      // The challenge served that enrollment: a second one on it is refused before any audio is read.
      const reused = await enroll(
        owner,
        { audio: recordedConsentEnrollment(), spoken_consent: recording },
        { name: 'Again', consent_id: await grantBiometricConsent(owner), challenge_id: issued.challenge_id },
      );
      expectProblem(reused, 403, 'consent_challenge_invalid');

      // A re-recording reads a fresh challenge: its evidence and recording replace the enrollment's.
      const renewed = await challengeFor(owner, SAYABLE_PHRASE);
      const rereading = recordedConsent(renewed.phrase);
      const reenrolled = await inject({
        method: 'POST',
        url: pathOf(reenrollVoiceRoute, { voice_id: voiceId }),
        headers: bearer(owner.accessToken),
        payload: audioForm({ audio: recordedConsentEnrollment(), spoken_consent: rereading }, { challenge_id: renewed.challenge_id }),
      });
      expect(reenrolled.statusCode, reenrolled.body).toBe(200);
      const [afterReenrollment] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
      expect(afterReenrollment?.spokenEvidence).toMatchObject({
        challenge_id: renewed.challenge_id,
        recording_sha256: createHash('sha256').update(rereading).digest('hex'),
      });
      const downloadAfter = await inject({
        method: 'GET',
        url: pathOf(spokenConsentRecordingRoute, { voice_id: voiceId }),
        headers: bearer(owner.accessToken),
      });
      expect(Buffer.compare(downloadAfter.rawPayload, Buffer.from(rereading))).toBe(0);

      expect(
        (await inject({ method: 'DELETE', url: pathOf(deleteVoiceRoute, { voice_id: voiceId }), headers: bearer(owner.accessToken) }))
          .statusCode,
      ).toBe(200);
      expect(await origin.database.db.select().from(spokenConsentRecordings).where(eq(spokenConsentRecordings.voiceId, voiceId))).toEqual(
        [],
      );
      expectProblem(
        await inject({
          method: 'GET',
          url: pathOf(spokenConsentRecordingRoute, { voice_id: voiceId }),
          headers: bearer(owner.accessToken),
        }),
        404,
        'not_found',
      );
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    'refuses the statement read with "not" inserted (consent_statement_not_spoken), saying what was heard, storing nothing',
    async () => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const issued = await challengeFor(owner, SAYABLE_PHRASE);
      const answer = await enroll(
        owner,
        { audio: recordedConsentEnrollment(), spoken_consent: recordedConsent(issued.phrase, { negated: true }) },
        { name: 'Refused', consent_id: consentId, challenge_id: issued.challenge_id },
      );
      const problem = expectProblem(answer, 422, 'consent_statement_not_spoken');
      expect(problem.detail).toContain('Heard: "it is me here and you can not use it now');
      await expectNothingStored(owner, consentId, issued.challenge_id);
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    'refuses the right statement followed by another phrase than the challenge asked (consent_phrase_not_spoken)',
    async () => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const issued = await challengeFor(owner, SAYABLE_PHRASE);
      const answer = await enroll(
        owner,
        { audio: recordedConsentEnrollment(), spoken_consent: recordedConsent('two zero eight five nine six') },
        { name: 'Misread', consent_id: consentId, challenge_id: issued.challenge_id },
      );
      expectProblem(answer, 422, 'consent_phrase_not_spoken');
      await expectNothingStored(owner, consentId, issued.challenge_id);
    },
    SPEECH_TIMEOUT_MS,
  );

  it('refuses a consent read by another speaker than the enrollment audio (consent_speaker_mismatch), storing nothing', async () => {
    const owner = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    const { challenge_id } = await challenge(owner);
    const answer = await enroll(
      owner,
      { audio: ENROLLMENT(), spoken_consent: speakerRecordings('so762:SPEAKER9623', 0, 1) },
      { name: 'Borrowed', consent_id: consentId, challenge_id },
    );
    expectProblem(answer, 422, 'consent_speaker_mismatch');
    await expectNothingStored(owner, consentId, challenge_id);
  });

  it(
    'refuses a consent in the right voice that does not read the statement (consent_statement_not_spoken), saying what was heard',
    async () => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const { challenge_id } = await challenge(owner);
      const answer = await enroll(
        owner,
        { audio: ENROLLMENT(), spoken_consent: SAME_VOICE_OTHER_WORDS() },
        { name: 'Unread', consent_id: consentId, challenge_id },
      );
      const problem = expectProblem(answer, 422, 'consent_statement_not_spoken');
      expect(problem.detail).toMatch(/Heard: /);
      // What was heard is also its own member, so that a client need not parse the detail.
      expect(typeof problem.heard).toBe('string');
      expect(problem.detail).toContain(problem.heard === '' ? 'Heard: nothing' : `Heard: "${problem.heard}"`);
      await expectNothingStored(owner, consentId, challenge_id);
    },
    SPEECH_TIMEOUT_MS,
  );

  it("refuses another owner's, an expired, a spent and an unknown challenge alike (consent_challenge_invalid) before any audio is processed", async () => {
    const owner = await loggedIn(origin);
    const other = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    const foreign = (await challenge(other)).challenge_id;
    const spent = (await challenge(owner)).challenge_id;
    await origin.database.db.update(consentChallenges).set({ usedAt: new Date() }).where(eq(consentChallenges.id, spent));
    const expiring = (await challenge(owner)).challenge_id;
    const attempt = (challenge_id: string) =>
      enroll(
        owner,
        { audio: ENROLLMENT(), spoken_consent: SAME_VOICE_OTHER_WORDS() },
        { name: 'Replay', consent_id: consentId, challenge_id },
      );
    for (const challengeId of [foreign, spent, '00000000-0000-4000-8000-000000000000']) {
      expectProblem(await attempt(challengeId), 403, 'consent_challenge_invalid');
    }
    origin.runtime.advance((limits.consentChallengeTtlSeconds + 1) * 1000);
    try {
      expectProblem(await attempt(expiring), 403, 'consent_challenge_invalid');
    } finally {
      origin.runtime.advance(-(limits.consentChallengeTtlSeconds + 1) * 1000);
    }
    await expectNothingStored(owner, consentId, expiring);
  });

  it(
    'answers silence, noise, a 60 s recording, a text file and a corrupt upload with problem+json, storing nothing',
    async () => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const { challenge_id } = await challenge(owner);
      const noise = pcm16Wav(Float32Array.from({ length: 16000 * 4 }, (_, i) => Math.sin(i * 12.9898) * 0.3));
      const corrupt = silentWav(2);
      new DataView(corrupt.buffer).setUint16(32, 3, true);
      const cases: Array<[Uint8Array, number, string]> = [
        [silentWav(4), 422, 'no_speech'],
        [noise, 422, 'no_speech'],
        [silentWav(60), 422, 'too_long'],
        [new TextEncoder().encode('I am the owner of this voice and I agree.'), 422, 'unsupported_format'],
        [corrupt, 422, 'corrupt_audio'],
      ];
      for (const [recording, status, code] of cases) {
        const answer = await enroll(
          owner,
          { audio: ENROLLMENT(), spoken_consent: recording },
          { name: 'Bad', consent_id: consentId, challenge_id },
        );
        expectProblem(answer, status, code);
      }
      await expectNothingStored(owner, consentId, challenge_id);
    },
    SPEECH_TIMEOUT_MS,
  );

  it('refuses a challenge_id without a recording, and a recording without a challenge_id, naming the field', async () => {
    const owner = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    const { challenge_id } = await challenge(owner);
    const noRecording = expectProblem(
      await enroll(owner, { audio: ENROLLMENT() }, { name: 'Half', consent_id: consentId, challenge_id }),
      422,
      'validation_failed',
    );
    expect(noRecording.errors?.map((error) => error.field)).toEqual(['body.spoken_consent']);
    const noChallenge = expectProblem(
      await enroll(owner, { audio: ENROLLMENT(), spoken_consent: SAME_VOICE_OTHER_WORDS() }, { name: 'Half', consent_id: consentId }),
      422,
      'validation_failed',
    );
    expect(noChallenge.errors?.map((error) => error.field)).toEqual(['body.challenge_id']);
  });
});

/**
 * A voice whose swapped reading the word checks refuse at the calibrated bounds (calibrate.ts
 * --sets synthetic measures every voice's: docs/BENCHMARKS.md, "Spoken consent").
 */
const SWAPPED_WORD_CAUGHT: SyntheticVoice = 'flite-kal16';

/**
 * Digits the decoder mishears in a voice's committed recordings: festival's "two" comes back "zero"
 * (docs/DECISIONS.md#spoken-consent-statement-spoken-en-3). A phrase with
 * more of them than the setting lets go wrong fails for the fixture, not for the service, so the test
 * asks for challenges until the origin draws one without.
 */
const MISHEARD_DIGITS: Partial<Record<SyntheticVoice, readonly string[]>> = { 'festival-slt-hts': ['two'] };

describe('spoken-en-3 read by voices no corpus speaker has (flite and festival, fixtures/spoken-consent/synthetic/)', () => {
  const voicesRead = Object.keys(SYNTHETIC_VOICES) as SyntheticVoice[];

  /** A challenge the origin drew whose phrase the voice's recordings can read within the setting. */
  async function readableChallenge(owner: Owner, voice: SyntheticVoice) {
    const misheard = MISHEARD_DIGITS[voice] ?? [];
    for (let attempt = 0; attempt < 20; attempt++) {
      const issued = await challenge(owner);
      const wrong = issued.phrase.split(' ').filter((word) => misheard.includes(word)).length;
      if (wrong <= CORPUS_SPEAKERS_SPOKEN_CONSENT.phraseMaxWrongWords) return issued;
    }
    throw new Error(`no phrase ${voice} can read came in 20 draws`);
  }

  it.each(voicesRead)(
    'enrolls %s with the statement and the phrase the origin drew, checked against its own enrollment',
    async (voice) => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const issued = await readableChallenge(owner, voice);
      expect(issued).toMatchObject({ statement: SPOKEN_CONSENT_STATEMENT.text, statement_version: 'spoken-en-3' });
      const answer = await enroll(
        owner,
        { audio: syntheticEnrollment(voice), spoken_consent: await syntheticConsent(voice, issued.phrase) },
        { name: voice, consent_id: consentId, challenge_id: issued.challenge_id },
      );
      expect(answer.statusCode, answer.body).toBe(201);
      const [consent] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, consentId));
      expect(consent?.spokenEvidence).toMatchObject({ statement_version: 'spoken-en-3', phrase: issued.phrase });
      expect(consent?.spokenEvidence?.heard.startsWith(`${spokenWords(SPOKEN_CONSENT_STATEMENT.text).join(' ')} `)).toBe(true);
      // The phrase is the origin's draw: a digit may be misheard (festival's "two" first after the statement comes back "zero"), as the setting allows.
      expect(consent?.spokenEvidence?.phrase_wrong_words).toBeLessThanOrEqual(CORPUS_SPEAKERS_SPOKEN_CONSENT.phraseMaxWrongWords);
      expect(consent?.spokenEvidence?.statement_score).toBeGreaterThanOrEqual(calibration.statement.min_score);
    },
    SPEECH_TIMEOUT_MS,
  );

  /** A first take of `voice` answering a challenge the origin drew: the enrollment's result and what it kept. */
  async function enrollWithConsent(voice: SyntheticVoice, consentFor: (phrase: string) => Promise<Uint8Array>) {
    const owner = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    const issued = await challenge(owner);
    const answer = await enroll(
      owner,
      { audio: syntheticEnrollment(voice), spoken_consent: await consentFor(issued.phrase) },
      { name: voice, consent_id: consentId, challenge_id: issued.challenge_id },
    );
    return { answer, owner, consentId, challengeId: issued.challenge_id };
  }

  it(
    'refuses the statement with a word the speaker did not say ("clone" for "protect"), naming the word the decoder forced in, saying what was heard, storing nothing',
    async () => {
      const attempt = await enrollWithConsent(SWAPPED_WORD_CAUGHT, (phrase) => syntheticConsent(SWAPPED_WORD_CAUGHT, phrase, 'swapped'));
      const problem = expectProblem(attempt.answer, 422, 'consent_statement_not_spoken');
      expect(problem.detail).toMatch(/the decoder had to force in .*"protect" \(word 17, /);
      // What was heard is the statement with the forced word in it: the decoder knows no other sentence.
      expect(problem.heard?.startsWith(spokenWords(SPOKEN_CONSENT_STATEMENT.text).join(' '))).toBe(true);
      await expectNothingStored(attempt.owner, attempt.consentId, attempt.challengeId);
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    "refuses a consent recording that carries this service's audio watermark as synthetic (consent_recording_synthetic), storing nothing",
    async () => {
      const voice: SyntheticVoice = 'flite-slt';
      const marked = async (phrase: string) =>
        pcm16Wav(markPcm(await syntheticConsentSamples(voice, phrase), 16000, { alg: WATERMARK_ALGORITHM, id: newWatermarkId() }));
      const attempt = await enrollWithConsent(voice, marked);
      const problem = expectProblem(attempt.answer, 422, 'consent_recording_synthetic');
      expect(problem.detail).toContain('watermark');
      await expectNothingStored(attempt.owner, attempt.consentId, attempt.challengeId);
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    'refuses a consent recording that carries Content Credentials as synthetic (consent_recording_synthetic), storing nothing',
    async () => {
      const voice: SyntheticVoice = 'flite-rms';
      const { signer } = platformSigner('Consent Forgery Ltd');
      const signed = async (phrase: string) => signedWithAssertions(await syntheticConsent(voice, phrase), 'audio/wav', [], signer);
      const attempt = await enrollWithConsent(voice, signed);
      const problem = expectProblem(attempt.answer, 422, 'consent_recording_synthetic');
      expect(problem.detail).toContain('Content Credentials');
      await expectNothingStored(attempt.owner, attempt.consentId, attempt.challengeId);
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    "refuses one synthetic voice's consent with another's enrollment (consent_speaker_mismatch), storing nothing",
    async () => {
      const owner = await loggedIn(origin);
      const consentId = await grantBiometricConsent(owner);
      const issued = await challenge(owner);
      const answer = await enroll(
        owner,
        { audio: syntheticEnrollment('flite-awb'), spoken_consent: await syntheticConsent('flite-rms', issued.phrase) },
        { name: 'Borrowed', consent_id: consentId, challenge_id: issued.challenge_id },
      );
      expectProblem(answer, 422, 'consent_speaker_mismatch');
      await expectNothingStored(owner, consentId, issued.challenge_id);
    },
    SPEECH_TIMEOUT_MS,
  );
});

describe('the default, SPOKEN_CONSENT=required', () => {
  let required: TestOrigin;
  beforeAll(async () => {
    // The origin's settings as main.ts reads them from an environment that names none.
    const { spokenConsent } = loadConfig({});
    expect(spokenConsent.mode).toBe('required');
    required = await startTestOrigin({ voiceprint: engine, spokenConsent });
  });
  afterAll(() => required?.close());

  it('refuses an enrollment without a spoken consent, naming both fields, storing nothing', async () => {
    const owner = await loggedIn(required);
    const { consent_id } = (
      await required.app.inject({
        method: 'POST',
        url: pathOf(grantBiometricConsentRoute),
        headers: bearer(owner.accessToken),
        payload: { type: 'biometric', statement_version: 'v3', accepted: true },
      })
    ).json();
    const enrollment = await required.app.inject({
      method: 'POST',
      url: pathOf(enrollVoiceRoute),
      headers: bearer(owner.accessToken),
      payload: audioForm({ audio: ENROLLMENT() }, { name: 'Unspoken', consent_id }),
    });
    const problem = expectProblem(enrollment, 422, 'validation_failed');
    expect(problem.errors?.map((error) => error.field)).toEqual(['body.spoken_consent', 'body.challenge_id']);
    expect(problem.detail).toContain('POST /api/v1/consents/challenges');
    expect(await required.database.db.select().from(voices).where(eq(voices.ownerId, owner.userId))).toEqual([]);
  });

  it('asks a voice enrolled before spoken consent for one at its next re-recording (re-enrollment without one is refused)', async () => {
    const owner = await loggedIn(required);
    const voiceId = await insertEnrolledVoice(required.database.db, engine, owner.userId, ENROLLMENT());
    const [before] = await required.database.db.select().from(voiceEmbeddings).where(eq(voiceEmbeddings.voiceId, voiceId));
    const answer = await required.app.inject({
      method: 'POST',
      url: pathOf(reenrollVoiceRoute, { voice_id: voiceId }),
      headers: bearer(owner.accessToken),
      payload: audioForm({ audio: ENROLLMENT() }),
    });
    const problem = expectProblem(answer, 422, 'validation_failed');
    expect(problem.errors?.map((error) => error.field)).toEqual(['body.spoken_consent', 'body.challenge_id']);
    const [after] = await required.database.db.select().from(voiceEmbeddings).where(eq(voiceEmbeddings.voiceId, voiceId));
    expect(after).toEqual(before);
  });
});
