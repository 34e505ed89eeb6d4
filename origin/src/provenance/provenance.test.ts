import { randomUUID } from 'node:crypto';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  authorizationAssertionBytes,
  checkpointText,
  formatTlogProof,
  noteKeyId,
  noteSignatureLine,
  type ProvenanceVerdict,
  type ProvenanceVerification,
  provenanceVerificationSchema,
  rfc6962LeafHash,
  signingCertificateSchema,
} from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { authorizationAssertionOf, embedAuthorization, type PlatformSigner } from '@vip/shared-schema/client/provenance';
import { signAsset } from '@vip/shared-schema/provenance/c2pa';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CheckpointSigner, createCheckpointSigner } from '../audit/checkpoints.js';
import { queueAuditRecords } from '../audit/queue.js';
import { gateRecord } from '../audit/test-records.js';
import { generateSigningJwk } from '../auth/access-tokens.js';
import { auditPending, domainEvents } from '../db/schema.js';
import { bearer, loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { audioForm, EMBEDDING_LIKE, speakerRecordings, startTestEngine } from '../testing/voiceprint.js';
import { insertEnrolledVoice } from '../testing/voices.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { audioByteOffset, audioFixture, CREDENTIAL_FORMATS, editText, platformSigner } from './test-files.js';

const ACME = 'Acme TTS';
const OTHER = 'Other Voices';

let engine: VoiceprintEngine;
let origin: TestOrigin;
let checkpoints: CheckpointSigner;
let adminToken: string;
let owner: Awaited<ReturnType<typeof loggedIn>>;
const keys: Record<string, string> = {};
const signers: Record<string, { caPem: string; signer: PlatformSigner }> = {};
/** Enrolled from the utterance every format fixture holds, with consent and Acme's licence. */
let voiceId: string;
/** Another speaker's voice, enrolled from the committed speech, also consented and licensed. */
let otherSpeakerVoiceId: string;

beforeAll(async () => {
  engine = await startTestEngine({ threads: 2, searchTargets: { designRegistrySize: 10 } });
  checkpoints = await createCheckpointSigner(await generateSigningJwk('provenance-test-log'));
  origin = await startTestOrigin({ voiceprint: engine, checkpoints });
  adminToken = (await loggedIn(origin, 'admin')).accessToken;
  owner = await loggedIn(origin);
  for (const name of [ACME, OTHER]) {
    keys[name] = (await platformWithApiKey(origin, adminToken, name)).api_key;
    signers[name] = platformSigner(name);
    expect((await registerCertificate(signers[name]!.caPem, { 'x-api-key': keys[name]! })).statusCode).toBe(201);
  }
  const sameUtterance = ['a.pcm16.wav', 'a.pcm24.wav', 'a.float32.wav', 'a.flac', 'a.44100.flac', 'a.48000.flac'].map(audioFixture);
  voiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, sameUtterance, { consentStatus: 'active' });
  otherSpeakerVoiceId = await insertEnrolledVoice(origin.database.db, engine, owner.userId, speakerRecordings('so762:SPEAKER0003', 0, 8), {
    consentStatus: 'active',
  });
  for (const voice of [voiceId, otherSpeakerVoiceId]) await license(voice, ACME);
}, 120_000);
afterEach(() => {
  for (const line of origin.logs) expect(line).not.toMatch(EMBEDDING_LIKE);
});
afterAll(async () => {
  await origin?.close();
  await engine?.close();
});

const registerCertificate = (pem: string, headers: Record<string, string>, platformName?: string) =>
  origin.app.inject({
    method: 'POST',
    url: '/api/v1/signing-certificates',
    headers,
    payload: { certificate_pem: pem, ...(platformName ? { platform_name: platformName } : {}) },
  });

async function license(voice: string, platformName: string) {
  const response = await origin.app.inject({
    method: 'POST',
    url: `/api/v1/voices/${voice}/licenses`,
    headers: bearer(owner.accessToken),
    payload: { platform_name: platformName, scopes: ['audiobook'], expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() },
  });
  expect(response.statusCode, response.body).toBe(201);
}

const setConsent = (voice: string, status: 'active' | 'withdrawn') =>
  origin.app.inject({ method: 'PUT', url: `/api/v1/voices/${voice}/consent`, headers: bearer(owner.accessToken), payload: { status } });

/**
 * An approval as the edge records it (gate decision, then the token's redemption), chained and
 * covered by a signed checkpoint; answers the receipt the platform fetches through HTTP.
 */
async function approval(voice: string, platformName = ACME, { redeemed = true } = {}): Promise<AuditReceipt> {
  const jti = randomUUID();
  const decision = gateRecord({
    voice_id: voice,
    platform_name: platformName,
    decision: 'allow',
    action: 'authorized',
    reason: null,
    license_status: 'licensed',
    token_jti: jti,
  });
  const redemption = gateRecord({
    kind: 'authorization.redeemed',
    voice_id: voice,
    platform_name: platformName,
    decision: 'allow',
    action: 'redeemed',
    reason: null,
    license_status: 'licensed',
    token_jti: jti,
  });
  await queueAuditRecords(origin.database.db, redeemed ? [decision, redemption] : [decision], origin.runtime.clock.now());
  while ((await origin.audit.appendPending()).more);
  await origin.tlog.signCheckpoint();
  const response = await origin.app.inject({
    method: 'GET',
    url: `/api/v1/protect/audit-log/${decision.check_id}/receipt`,
    headers: { 'x-api-key': keys[platformName]! },
  });
  expect(response.statusCode, response.body).toBe(200);
  return response.json() as AuditReceipt;
}

async function signedFile(
  file: string,
  mime: (typeof CREDENTIAL_FORMATS)[number]['mime'],
  receipt: AuditReceipt,
  signer = signers[ACME]!.signer,
) {
  return embedAuthorization(audioFixture(file), mime, { check_id: receipt.check_id, receipt }, signer, { softwareAgent: 'Acme TTS v3' });
}

const verifyFile = (bytes: Uint8Array, headers: Record<string, string> = { 'x-api-key': keys[OTHER]! }) =>
  origin.app.inject({ method: 'POST', url: '/api/v1/provenance/verify', headers, payload: audioForm({ audio: bytes }) });

async function verdictOf(bytes: Uint8Array, expected: ProvenanceVerdict): Promise<ProvenanceVerification> {
  const response = await verifyFile(bytes);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body).not.toMatch(EMBEDDING_LIKE);
  const result = provenanceVerificationSchema.parse(response.json());
  expect(result.verdict, JSON.stringify(result)).toBe(expected);
  return result;
}

const failureEvents = (voice: string) =>
  origin.database.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.eventType, 'provenance.verification_failed'), eq(domainEvents.voiceId, voice)));

const verificationsQueued = async () =>
  (
    await origin.database.db
      .select({ count: sql<number>`count(*)::int` })
      .from(auditPending)
      .where(sql`${auditPending.record} ->> 'kind' = 'provenance.verification'`)
  )[0]!.count;

describe.each(CREDENTIAL_FORMATS)('POST /api/v1/provenance/verify, $name', ({ file, mime }) => {
  it('judges a file the platform signed after an approval `authorized`, and says what that rests on', async () => {
    const receipt = await approval(voiceId);
    const result = await verdictOf(await signedFile(file, mime, receipt), 'authorized');
    expect(result.credentials).toMatchObject({
      present: true,
      state: 'trusted',
      failure_codes: [],
      synthetic: true,
      signer: { common_name: `${ACME} signer`, registered_platform: ACME },
    });
    expect(result.authorization).toMatchObject({
      present: true,
      problems: [],
      check_id: receipt.check_id,
      voice_id: voiceId,
      platform_name: ACME,
      intended_use: 'audiobook',
      receipt_verified: true,
      approved: true,
      redeemed: true,
      consent_standing: true,
      license_standing: true,
    });
    expect(result.voice).toMatchObject({ compared_with: voiceId, is_same_speaker: true, model: engine.model.name });
    // The verification is an audit entry of its own, under the voice it named.
    const [entry] = await origin.database.db
      .select()
      .from(auditPending)
      .where(sql`${auditPending.record} ->> 'check_id' = ${result.check_id}`);
    expect(entry?.record).toMatchObject({ kind: 'provenance.verification', voice_id: voiceId, platform_name: ACME, action: 'verified' });
    expect((entry!.record as { reason: string }).reason).toContain('verdict=authorized');
  });

  it('judges the file `altered` once one byte of its audio changed, and tells the voice owner', async () => {
    const signed = await signedFile(file, mime, await approval(voiceId));
    const altered = Uint8Array.from(signed);
    altered[audioByteOffset(signed)]! ^= 0x01;
    const before = (await failureEvents(voiceId)).length;
    const result = await verdictOf(altered, 'altered');
    expect(result.credentials.state).toBe('invalid');
    expect(result.credentials.failure_codes.some((code) => /^assertion\.(dataHash|bmffHash)\.mismatch$/.test(code))).toBe(true);
    const events = await failureEvents(voiceId);
    expect(events.length).toBe(before + 1);
    expect(events.at(-1)!.ownerId).toBe(owner.userId);
    expect(events.at(-1)!.payload).toMatchObject({ verdict: 'altered', verification_check_id: result.check_id, platform_name: ACME });
  });

  it('judges a file whose authorization assertion was edited invalid', async () => {
    const signed = await signedFile(file, mime, await approval(voiceId));
    const result = await verdictOf(editText(signed, '"intended_use":"audiobook"', '"intended_use":"audioboox"'), 'credentials_invalid');
    expect(result.credentials.failure_codes).toContain('assertion.hashedURI.mismatch');
  });

  it('judges a file signed with another registered platform’s certificate `signer_not_the_platform`', async () => {
    const result = await verdictOf(
      await signedFile(file, mime, await approval(voiceId), signers[OTHER]!.signer),
      'signer_not_the_platform',
    );
    expect(result.credentials.state).toBe('trusted');
    expect(result.credentials.signer?.registered_platform).toBeNull();
  });

  it('judges a valid authorization of one voice carried by audio of another speaker `voice_mismatch`', async () => {
    const result = await verdictOf(await signedFile(file, mime, await approval(otherSpeakerVoiceId)), 'voice_mismatch');
    expect(result.voice).toMatchObject({ compared_with: otherSpeakerVoiceId, is_same_speaker: false });
    expect(result.authorization.receipt_verified).toBe(true);
  });

  it('judges a file without a manifest, of a protected voice, `no_credentials_protected_voice`', async () => {
    const result = await verdictOf(audioFixture(file), 'no_credentials_protected_voice');
    expect(result.credentials.present).toBe(false);
    expect(result.voice.protected_matches.map((match) => match.voice_id)).toContain(voiceId);
  });
});
