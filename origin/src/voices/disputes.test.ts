import { createHash } from 'node:crypto';
import {
  auditRecordSchema,
  pathOf,
  voiceDisputeListSchema,
  voiceDisputeSchema,
  voiceReviewListSchema,
  voiceReviewOutcomeSchema,
} from '@vip/shared-schema';
import { auditReceiptRoute } from '@vip/shared-schema/routes/origin/audit';
import { spokenConsentRecordingRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import {
  decideVoiceReviewRoute,
  deleteVoiceRoute,
  listVoiceDisputesRoute,
  listVoiceReviewsRoute,
  listVoicesRoute,
  openVoiceDisputeRoute,
} from '@vip/shared-schema/routes/origin/voices';
import { eq } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { auditEntries, biometricConsents, consentChallenges, voiceDisputes, voices } from '../db/schema.js';
import { bearer, loggedIn } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { challengeFor, recordedConsent, recordedConsentEnrollment } from '../testing/recorded-consent.js';
import { engine, enroll, eventsOf, grantBiometricConsent, inject, origin } from '../testing/voice-routes.js';
import { audioForm, speakerRecordings } from '../testing/voiceprint.js';
import { insertEnrolledVoice } from '../testing/voices.js';

/*
 * Voice disputes through the public API (docs/DECISIONS.md#voice-disputes). The recorded speaker of
 * testing/recorded-consent.ts is the real owner of a voice that another account enrolled from the
 * same recordings (a copy, as someone who took them would make); they claim it with their spoken
 * consent, checked as an enrollment's.
 */

type Owner = Awaited<ReturnType<typeof loggedIn>>;

/**
 * An enrollment embeds 17 s of speech, a dispute that and the consent, whose words it decodes: a
 * few seconds of CPU, several times that on a loaded shared machine.
 */
const SPEECH_TIMEOUT_MS = 180_000;

/** Another account's copy of the recorded speaker's voice, with synthesis consent on. */
async function copiedVoice() {
  const holder = await loggedIn(origin);
  const voiceId = await insertEnrolledVoice(origin.database.db, engine, holder.userId, recordedConsentEnrollment(), {
    consentStatus: 'active',
  });
  return { holder, voiceId };
}

/** The recorded speaker's dispute form: their recordings, a consent of theirs and the spoken consent of a fresh challenge. */
async function disputeForm(claimant: Owner, { audio = recordedConsentEnrollment(), name = 'My own voice' } = {}) {
  const issued = await challengeFor(origin, claimant);
  const recording = recordedConsent(issued.phrase);
  const fields = { name, consent_id: await grantBiometricConsent(claimant), challenge_id: issued.challenge_id };
  return { issued, recording, fields, payload: audioForm({ audio, spoken_consent: recording }, fields) };
}

const openDispute = (claimant: Owner, payload: ReturnType<typeof audioForm>) =>
  inject({ method: 'POST', url: pathOf(openVoiceDisputeRoute), headers: bearer(claimant.accessToken), payload });

const decide = async (voiceId: string, decision: 'clear' | 'reject' | 'transfer') =>
  inject({
    method: 'POST',
    url: pathOf(decideVoiceReviewRoute, { voice_id: voiceId }),
    headers: bearer((await loggedIn(origin, 'admin')).accessToken),
    payload: { decision },
  });

const disputesOf = async (claimant: Owner) =>
  voiceDisputeListSchema.parse(
    (await inject({ method: 'GET', url: pathOf(listVoiceDisputesRoute), headers: bearer(claimant.accessToken) })).json(),
  ).disputes;

const disputeRow = async (disputeId: string) =>
  (await origin.database.db.select().from(voiceDisputes).where(eq(voiceDisputes.id, disputeId)))[0]!;

const statusOf = async (voiceId: string) =>
  (await origin.database.db.select({ status: voices.status }).from(voices).where(eq(voices.id, voiceId)))[0]?.status ?? null;

describe('POST /api/v1/voices/disputes', () => {
  it(
    "holds the voice a person proves is theirs, tells its owner, names neither side's ids to the other, and gives the claimant a receipt",
    async () => {
      const { holder, voiceId } = await copiedVoice();
      const claimant = await loggedIn(origin);
      const { issued, recording, fields, payload } = await disputeForm(claimant);

      const response = await openDispute(claimant, payload);
      expect(response.statusCode, response.body).toBe(201);
      const dispute = voiceDisputeSchema.parse(response.json());
      expect(dispute).toMatchObject({ status: 'open', name: 'My own voice', voice_id: null, decided_at: null });
      expect(response.body).not.toContain(voiceId);
      expect(response.body).not.toContain(holder.userId);

      // Held: it grants nothing (the edge index is republished) until an administrator decides.
      expect(await statusOf(voiceId)).toBe('pending_review');
      const [challenge] = await origin.database.db.select().from(consentChallenges).where(eq(consentChallenges.id, issued.challenge_id));
      expect(challenge?.usedAt).not.toBeNull();
      const [consent] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, fields.consent_id));
      expect(consent?.voiceId).toBeNull();

      const holderEvents = await eventsOf(holder.userId);
      expect(holderEvents.at(-1)).toMatchObject({ eventType: 'voice.review_pending', voiceId, payload: { role: 'disputed_voice' } });
      expect(JSON.stringify(holderEvents)).not.toContain(claimant.userId);

      const admin = await loggedIn(origin, 'admin');
      const queue = voiceReviewListSchema.parse(
        (await inject({ method: 'GET', url: pathOf(listVoiceReviewsRoute), headers: bearer(admin.accessToken) })).json(),
      );
      const review = queue.reviews.find((entry) => entry.voice_id === voiceId);
      expect(review).toMatchObject({
        owner_id: holder.userId,
        reason: 'dispute',
        matched_voice_id: null,
        dispute: {
          dispute_id: dispute.dispute_id,
          claimant_id: claimant.userId,
          spoken_consent: {
            challenge_id: issued.challenge_id,
            phrase: issued.phrase,
            phrase_wrong_words: 0,
            recording_sha256: createHash('sha256').update(recording).digest('hex'),
          },
        },
      });
      expect(review!.similarity).toBeGreaterThan(0.9);

      expect(await disputesOf(claimant)).toEqual([dispute]);
      expect(await disputesOf(holder)).toEqual([]);

      // The claimant's entry names no voice; the holder's is the service's, so it names no claimant.
      while ((await origin.audit.appendPending()).more);
      await origin.tlog.signCheckpoint();
      const entries = (await origin.database.db.select().from(auditEntries))
        .map((row) => auditRecordSchema.parse(JSON.parse(row.entryJson)))
        .filter((entry) => entry.kind === 'voice.dispute');
      expect(entries.find((entry) => entry.check_id === dispute.check_id)).toMatchObject({
        action: 'opened',
        voice_id: null,
        caller_type: 'user',
        caller_id: claimant.userId,
      });
      expect(entries.find((entry) => entry.voice_id === voiceId)).toMatchObject({
        action: 'opened',
        caller_type: 'system',
        caller_id: null,
      });
      const receipt = await inject({
        method: 'GET',
        url: pathOf(auditReceiptRoute, { check_id: dispute.check_id }),
        headers: bearer(claimant.accessToken),
      });
      expect(receipt.statusCode, receipt.body).toBe(200);
      expectProblem(
        await inject({
          method: 'GET',
          url: pathOf(auditReceiptRoute, { check_id: dispute.check_id }),
          headers: bearer(holder.accessToken),
        }),
        404,
        'not_found',
      );

      // One dispute of a voice at a time: a second claim waits for the decision, and keeps nothing.
      const again = await disputeForm(claimant);
      const second = await openDispute(claimant, again.payload);
      expect(expectProblem(second, 409, 'voice_under_review').detail).toMatch(/already held for an administrator/);
      const [unspent] = await origin.database.db
        .select()
        .from(consentChallenges)
        .where(eq(consentChallenges.id, again.issued.challenge_id));
      expect(unspent?.usedAt).toBeNull();
      expect(await disputesOf(claimant)).toHaveLength(1);
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    "transferred: the claimant's voiceprint becomes their voice, with their consent and recording; the copy is erased and both sides are told",
    async () => {
      const { holder, voiceId } = await copiedVoice();
      const claimant = await loggedIn(origin);
      const { recording, fields, payload } = await disputeForm(claimant);
      const dispute = voiceDisputeSchema.parse((await openDispute(claimant, payload)).json());

      const decided = await decide(voiceId, 'transfer');
      expect(decided.statusCode, decided.body).toBe(200);
      const outcome = voiceReviewOutcomeSchema.parse(decided.json());
      expect(outcome).toMatchObject({ voice_id: voiceId, status: 'transferred' });
      const newVoiceId = outcome.transferred_voice_id!;

      expect(await statusOf(voiceId)).toBeNull();
      const mine = (await inject({ method: 'GET', url: pathOf(listVoicesRoute), headers: bearer(claimant.accessToken) })).json();
      expect(mine.voices).toEqual([
        expect.objectContaining({ voice_id: newVoiceId, name: 'My own voice', status: 'ready', consent_status: 'unknown' }),
      ]);
      const [consent] = await origin.database.db.select().from(biometricConsents).where(eq(biometricConsents.id, fields.consent_id));
      expect(consent).toMatchObject({ voiceId: newVoiceId, spokenEvidence: { phrase_wrong_words: 0 } });
      const download = await inject({
        method: 'GET',
        url: pathOf(spokenConsentRecordingRoute, { voice_id: newVoiceId }),
        headers: bearer(claimant.accessToken),
      });
      expect(Buffer.compare(download.rawPayload, Buffer.from(recording))).toBe(0);

      expect(await disputesOf(claimant)).toEqual([
        { ...dispute, status: 'transferred', voice_id: newVoiceId, decided_at: expect.any(String) },
      ]);
      // The claimant's biometric data left the dispute with the transfer.
      expect(await disputeRow(dispute.dispute_id)).toMatchObject({ embedding: null, recording: null, voiceId: null });
      expect((await eventsOf(claimant.userId)).at(-1)).toMatchObject({
        eventType: 'voice.dispute_closed',
        voiceId: newVoiceId,
        payload: { dispute_id: dispute.dispute_id, status: 'transferred' },
      });
      const told = (await eventsOf(holder.userId)).map((event) => event.eventType);
      expect(told.slice(-2)).toEqual(['voice.review_rejected', 'voice.deleted']);

      // The claimant's voice is theirs now: a later copy of it is refused as any other would be.
      const copier = await loggedIn(origin);
      const copy = await enroll(
        copier,
        { audio: recordedConsentEnrollment() },
        { name: 'Copy', consent_id: await grantBiometricConsent(copier) },
      );
      expectProblem(copy, 409, 'identity_conflict');
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    "cleared: the voice is its owner's again and the claimant's recordings are erased; a transfer needs the claimant's consent unused",
    async () => {
      const { voiceId } = await copiedVoice();
      const claimant = await loggedIn(origin);
      const { fields, payload } = await disputeForm(claimant);
      const dispute = voiceDisputeSchema.parse((await openDispute(claimant, payload)).json());

      // The claimant enrolled another voice with the consent meanwhile: nothing to transfer it with.
      await origin.database.db.update(biometricConsents).set({ voiceId }).where(eq(biometricConsents.id, fields.consent_id));
      expect(expectProblem(await decide(voiceId, 'transfer'), 409, 'conflict').detail).toMatch(/biometric consent was used/);
      await origin.database.db.update(biometricConsents).set({ voiceId: null }).where(eq(biometricConsents.id, fields.consent_id));
      expect(await statusOf(voiceId)).toBe('pending_review');

      const cleared = voiceReviewOutcomeSchema.parse((await decide(voiceId, 'clear')).json());
      expect(cleared).toMatchObject({ status: 'ready', transferred_voice_id: null });
      expect(await statusOf(voiceId)).toBe('ready');
      expect(await disputeRow(dispute.dispute_id)).toMatchObject({ status: 'cleared', embedding: null, recording: null, voiceId });
      expect((await eventsOf(claimant.userId)).at(-1)).toMatchObject({
        eventType: 'voice.dispute_closed',
        voiceId: null,
        payload: { status: 'cleared' },
      });
      expectProblem(await decide(voiceId, 'clear'), 409, 'conflict');
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    'ends when the disputed voice is erased by its owner, and the claimant is told',
    async () => {
      const { holder, voiceId } = await copiedVoice();
      const claimant = await loggedIn(origin);
      const dispute = voiceDisputeSchema.parse((await openDispute(claimant, (await disputeForm(claimant)).payload)).json());
      const erased = await inject({
        method: 'DELETE',
        url: pathOf(deleteVoiceRoute, { voice_id: voiceId }),
        headers: bearer(holder.accessToken),
      });
      expect(erased.statusCode).toBe(200);
      expect((await disputesOf(claimant))[0]).toMatchObject({ dispute_id: dispute.dispute_id, status: 'voice_deleted' });
      expect((await eventsOf(claimant.userId)).at(-1)).toMatchObject({
        eventType: 'voice.dispute_closed',
        payload: { status: 'voice_deleted' },
      });
    },
    SPEECH_TIMEOUT_MS,
  );

  it(
    'refuses, keeping nothing: no voice of another owner sounds like the recordings; a consent read by another voice; no spoken consent',
    async () => {
      const claimant = await loggedIn(origin);
      const { issued, payload } = await disputeForm(claimant);
      expect(expectProblem(await openDispute(claimant, payload), 404, 'not_found').detail).toMatch(/nothing to dispute/);
      const [unspent] = await origin.database.db.select().from(consentChallenges).where(eq(consentChallenges.id, issued.challenge_id));
      expect(unspent?.usedAt).toBeNull();

      await copiedVoice();
      const otherVoice = await disputeForm(claimant, { audio: speakerRecordings('so762:SPEAKER9622', 0, 3) });
      expectProblem(await openDispute(claimant, otherVoice.payload), 422, 'consent_speaker_mismatch');

      // Whatever SPOKEN_CONSENT says about enrollments, a dispute is never taken without one.
      const unspoken = audioForm(
        { audio: recordedConsentEnrollment() },
        { name: 'Mine', consent_id: await grantBiometricConsent(claimant) },
      );
      const problem = expectProblem(await openDispute(claimant, unspoken), 422, 'validation_failed');
      expect(problem.detail).toMatch(/only with its spoken consent/);
      expect(await disputesOf(claimant)).toEqual([]);
    },
    SPEECH_TIMEOUT_MS,
  );
});

describe('the 409 of an enrollment of a voice already enrolled', () => {
  it(
    'says how its real owner disputes it',
    async () => {
      await copiedVoice();
      const owner = await loggedIn(origin);
      const problem = expectProblem(
        await enroll(owner, { audio: recordedConsentEnrollment() }, { name: 'Mine', consent_id: await grantBiometricConsent(owner) }),
        409,
        'identity_conflict',
      );
      expect(problem.detail).toContain(`POST ${openVoiceDisputeRoute.path}`);
    },
    SPEECH_TIMEOUT_MS,
  );
});
