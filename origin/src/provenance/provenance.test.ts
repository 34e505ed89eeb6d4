import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  checkpointText,
  formatTlogProof,
  limits,
  noteKeyId,
  noteSignatureLine,
  PROVENANCE_CHECKS,
  type ProvenanceCheck,
  type ProvenanceVerdict,
  type ProvenanceVerification,
  pathOf,
  provenanceVerificationSchema,
  rfc6962LeafHash,
  rootFromInclusionProof,
  signingCertificateSchema,
  softBindingQueryResultSchema,
} from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { authorizationAssertionOf, embedAuthorization, type PlatformSigner } from '@vip/shared-schema/client/provenance';
import type { ManifestAssertion } from '@vip/shared-schema/provenance/c2pa';
import { auditReceiptRoute } from '@vip/shared-schema/routes/origin/audit';
import {
  depositManifestRoute,
  manifestRoute,
  registerSigningCertificateRoute,
  revokeSigningCertificateRoute,
  softBindingAlgorithmsRoute,
  softBindingByBindingRoute,
  softBindingByContentRoute,
  verifyProvenanceRoute,
} from '@vip/shared-schema/routes/origin/provenance';
import { createLicenseRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import {
  manyAssertions,
  PADDING_ASSERTION,
  signedWithAssertions,
  storeOfWav,
  withDecoyStore,
  withFreeBoxes,
  withLargeSizeStoreHeader,
} from '@vip/shared-schema/testing/hostile-files';
import { testCertificateAuthority, testLeafCertificate } from '@vip/shared-schema/testing/provenance-ca';
import { audioByteOffset, CREDENTIAL_FORMATS, editText, platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { testApprovalReceipt } from '@vip/shared-schema/testing/provenance-receipt';
import { markPcm, WATERMARK_ALGORITHM } from '@vip/shared-schema/watermark/index';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CheckpointSigner, createCheckpointSigner } from '../audit/checkpoints.js';
import { queueAuditRecords } from '../audit/queue.js';
import { generateSigningJwk } from '../auth/access-tokens.js';
import { auditPending, domainEvents } from '../db/schema.js';
import { gateRecord } from '../testing/audit-records.js';
import { fixturesDir, pcm16Wav } from '../testing/fixtures.js';
import { atStartOfRateWindow, bearer, loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { audioFixture } from '../testing/provenance-files.js';
import { audioForm, EMBEDDING_LIKE, speakerRecordings, startTestEngine } from '../testing/voiceprint.js';
import { insertEnrolledVoice } from '../testing/voices.js';
import { decodeAudio } from '../voiceprint/decode.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';
import { createResampler } from '../voiceprint/resample.js';
import { registerMarks } from './store.js';

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
    url: pathOf(registerSigningCertificateRoute),
    headers,
    payload: { certificate_pem: pem, ...(platformName ? { platform_name: platformName } : {}) },
  });

async function license(voice: string, platformName: string) {
  const response = await origin.app.inject({
    method: 'POST',
    url: pathOf(createLicenseRoute, { voice_id: voice }),
    headers: bearer(owner.accessToken),
    payload: {
      platform_name: platformName,
      scopes: ['audiobook'],
      description: 'Narration of audiobook chapters for the tests',
      expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    },
  });
  expect(response.statusCode, response.body).toBe(201);
}

const setSynthesisConsent = (voice: string, status: 'active' | 'withdrawn') =>
  origin.app.inject({
    method: 'PUT',
    url: pathOf(setSynthesisConsentRoute, { voice_id: voice }),
    headers: bearer(owner.accessToken),
    payload: { status },
  });

/**
 * An approval as the edge records it (gate decision, then the token's redemption), chained and
 * covered by a signed checkpoint; answers the receipt the platform fetches through HTTP.
 */
async function approval(
  voice: string,
  platformName = ACME,
  { redeemed = true, watermarkId }: { redeemed?: boolean; watermarkId?: string } = {},
): Promise<AuditReceipt> {
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
  // The redemption carries the watermark id the edge minted beside its record, as the collector hands it over.
  const handedOver = watermarkId ? { ...redemption, watermark_id: watermarkId } : redemption;
  const records = redeemed ? [decision, handedOver] : [decision];
  await queueAuditRecords(origin.database.db, records, origin.runtime.clock.now());
  await registerMarks(origin.database.db, records);
  while ((await origin.audit.appendPending()).more);
  await origin.tlog.signCheckpoint();
  const response = await origin.app.inject({
    method: 'GET',
    url: pathOf(auditReceiptRoute, { check_id: decision.check_id }),
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

const verifyFile = (bytes: Uint8Array | FormData, headers: Record<string, string> = { 'x-api-key': keys[OTHER]! }) =>
  origin.app.inject({
    method: 'POST',
    url: pathOf(verifyProvenanceRoute),
    headers,
    payload: bytes instanceof FormData ? bytes : audioForm({ audio: bytes }),
  });

const except = (...ran: ProvenanceCheck[]) => PROVENANCE_CHECKS.filter((check) => !ran.includes(check));
/**
 * What each verdict's answer says it did not check, for a file whose credentials name the decision:
 * nothing about a decision before its receipt proves it and its platform signed the file, everything
 * after. A file named by its mark alone has no signer to hold against the platform.
 */
const NOT_CHECKED: Record<ProvenanceVerdict, ProvenanceCheck[]> = {
  watermark_not_issued: except('protected_voices'),
  no_credentials_protected_voice: except('protected_voices'),
  no_credentials: except('protected_voices'),
  altered: except(),
  credentials_invalid: except(),
  no_authorization_protected_voice: except('protected_voices'),
  no_authorization: except('protected_voices'),
  authorization_malformed: except(),
  credentials_watermark_mismatch: except(),
  receipt_invalid: except('receipt'),
  not_approved: except('receipt', 'approval'),
  signer_not_registered: except('receipt', 'approval', 'signer_platform'),
  signer_not_the_platform: except('receipt', 'approval', 'signer_platform'),
  voice_mismatch: ['protected_voices'],
  authorization_revoked_since: ['protected_voices'],
  not_redeemed: ['protected_voices'],
  watermark_authorized: ['protected_voices'],
  authorized: ['protected_voices'],
};

/** Every member of the answer is what was checked, or null (or empty) and named in `not_checked`. */
function expectStatesOnlyWhatItChecked(result: ProvenanceVerification): void {
  const namedByMark = !result.authorization.present && result.authorization.check_id !== null;
  const expected = NOT_CHECKED[result.verdict];
  expect(result.not_checked, result.verdict).toEqual(
    namedByMark && !expected.includes('signer_platform')
      ? PROVENANCE_CHECKS.filter((check) => [...expected, 'signer_platform'].includes(check))
      : expected,
  );
  const unchecked = (check: ProvenanceCheck) => result.not_checked.includes(check);
  const { authorization, voice, credentials } = result;
  expect(authorization.receipt_verified === null).toBe(unchecked('receipt'));
  expect(authorization.approved === null).toBe(unchecked('approval'));
  expect(authorization.redeemed === null).toBe(unchecked('redemption'));
  expect([authorization.consent_standing === null, authorization.license_standing === null]).toEqual(
    Array(2).fill(unchecked('consent_and_license_today')),
  );
  expect(voice.is_same_speaker === null).toBe(unchecked('voice'));
  if (unchecked('signer_platform')) expect(credentials.signer?.registered_platform ?? null).toBeNull();
  if (unchecked('protected_voices')) expect(voice.protected_matches).toEqual([]);
}

async function verdictOf(bytes: Uint8Array, expected: ProvenanceVerdict): Promise<ProvenanceVerification> {
  const response = await verifyFile(bytes);
  expect(response.statusCode, response.body).toBe(200);
  expect(response.body).not.toMatch(EMBEDDING_LIKE);
  const result = provenanceVerificationSchema.parse(response.json());
  expect(result.verdict, JSON.stringify({ ...result, authorization: null })).toBe(expected);
  expectStatesOnlyWhatItChecked(result);
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

describe.each(CREDENTIAL_FORMATS)('POST /api/v1/provenance/verify, $name', { timeout: 120_000 }, ({ file, mime }) => {
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
    // The receipt as the file carries it, for whoever checks it without the service (the playground does, in the page).
    expect(result.authorization.receipt).toEqual(receipt);
    expect(result.voice).toMatchObject({ compared_with: voiceId, is_same_speaker: true, model: engine.model.name });
    // No mark in it, and nothing made up: the detector read its bounded windows and found none.
    expect(result.watermark).toEqual({ found: false, alg: WATERMARK_ALGORITHM, windows_read: expect.any(Number) });
    expect(result.watermark.windows_read).toBeLessThanOrEqual(limits.watermarkDetectMaxWindows);
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
    // Broken credentials vouch for no decision: nothing about the one they name was checked.
    expect(result.authorization).toMatchObject({ receipt_verified: null, approved: null, redeemed: null, consent_standing: null });
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

  it('judges a valid authorization of one voice carried by audio of another speaker `voice_mismatch`, and still says what stands of it', async () => {
    const result = await verdictOf(await signedFile(file, mime, await approval(otherSpeakerVoiceId)), 'voice_mismatch');
    expect(result.voice).toMatchObject({ compared_with: otherSpeakerVoiceId, is_same_speaker: false });
    // The decision was redeemed, and its consent and licence stand: the voice alone fails.
    expect(result.authorization).toMatchObject({
      receipt_verified: true,
      approved: true,
      redeemed: true,
      consent_standing: true,
      license_standing: true,
    });
    expect(result.credentials.signer?.registered_platform).toBe(ACME);
  });

  it('judges a file without a manifest, of a protected voice, `no_credentials_protected_voice`', async () => {
    const result = await verdictOf(audioFixture(file), 'no_credentials_protected_voice');
    expect(result.credentials.present).toBe(false);
    expect(result.voice.protected_matches.map((match) => match.voice_id)).toContain(voiceId);
  });

  it('judges a file `authorization_revoked_since` once the owner withdrew consent after synthesis, and `authorized` again once granted', async () => {
    const signed = await signedFile(file, mime, await approval(voiceId));
    expect((await setSynthesisConsent(voiceId, 'withdrawn')).statusCode).toBe(200);
    try {
      const result = await verdictOf(signed, 'authorization_revoked_since');
      expect(result.authorization).toMatchObject({
        receipt_verified: true,
        approved: true,
        consent_standing: false,
        license_standing: true,
      });
    } finally {
      expect((await setSynthesisConsent(voiceId, 'active')).statusCode).toBe(200);
    }
    await verdictOf(signed, 'authorized');
  });

  it('refuses a receipt whose leaf is another check’s (`receipt_invalid`)', async () => {
    const [first, second] = [await approval(voiceId), await approval(voiceId)];
    const assertion = { ...authorizationAssertionOf({ check_id: first.check_id, receipt: first }), receipt: second };
    const result = await verdictOf(await signedWith([authorizationAssertion(assertion)], { file, mime }), 'receipt_invalid');
    expect(result.authorization.problems.join()).toMatch(/another check/);
    expect(result.authorization.receipt_verified).toBe(false);
  });

  it('refuses a receipt whose checkpoint, though signed with the log key, is not consistent with the log', async () => {
    const receipt = await approval(voiceId);
    const proof = receipt.proof.split('\n');
    const index = Number(proof[1]!.slice('index '.length));
    const checkpointLines = receipt.proof.slice(receipt.proof.indexOf('\n\n') + 2).split('\n');
    const size = Number(checkpointLines[1]);
    // The same inclusion path, but through other hashes: a tree holding this leaf that the log never had.
    const forkedPath = proof.slice(2, proof.indexOf('')).map(() => crypto.getRandomValues(new Uint8Array(32)));
    const root = await rootFromInclusionProof(index, size, await rfc6962LeafHash(receipt.leaf), forkedPath);
    const text = checkpointText({ origin: 'vip.local/audit', size, rootHash: root });
    const note = `${text}\n${noteSignatureLine('vip.local/audit', await noteKeyId('vip.local/audit', checkpoints.publicKey), checkpoints.signRaw(new TextEncoder().encode(text)))}`;
    const forked = { ...receipt, proof: formatTlogProof({ index, path: forkedPath, checkpoint: note }) };
    const assertion = authorizationAssertionOf({ check_id: receipt.check_id, receipt: forked });
    const result = await verdictOf(await signedWith([authorizationAssertion(assertion)], { file, mime }), 'receipt_invalid');
    expect(result.authorization.problems.join()).toMatch(/not consistent with this log/);
  });
});

/** A file signed by ACME with any manifest assertions: what a forger or a careless platform could write. */
const signedWith = (
  assertions: ManifestAssertion[],
  { file, mime }: Pick<(typeof CREDENTIAL_FORMATS)[number], 'file' | 'mime'> = { file: 'a.pcm16.wav', mime: 'audio/wav' },
) => signedWithAssertions(audioFixture(file), mime, assertions, signers[ACME]!.signer);
const authorizationAssertion = (data: unknown) => ({ label: AUTHORIZATION_ASSERTION_LABEL, data, kind: 'Json' as const });

describe('POST /api/v1/provenance/verify: the authorization and what stands today', { timeout: 120_000 }, () => {
  it('judges an approval whose token was never redeemed `not_redeemed`', async () => {
    const result = await verdictOf(
      await signedFile('a.pcm16.wav', 'audio/wav', await approval(voiceId, ACME, { redeemed: false })),
      'not_redeemed',
    );
    expect(result.authorization).toMatchObject({ receipt_verified: true, redeemed: false });
  });

  it('refuses a receipt of another log (`receipt_invalid`)', async () => {
    const { entry, receipt } = await testApprovalReceipt({ voice_id: voiceId, platform_name: ACME }, 'vip.local/audit');
    const assertion = authorizationAssertionOf({ check_id: entry.check_id, receipt });
    const result = await verdictOf(await signedWith([authorizationAssertion(assertion)]), 'receipt_invalid');
    expect(result.authorization.problems.join()).toMatch(/does not verify against this log/);
  });

  it('judges an assertion naming a decision that blocked `not_approved`', async () => {
    const check = gateRecord({ voice_id: voiceId, platform_name: ACME });
    await queueAuditRecords(origin.database.db, [check], origin.runtime.clock.now());
    while ((await origin.audit.appendPending()).more);
    await origin.tlog.signCheckpoint();
    const receipt = (
      await origin.app.inject({
        method: 'GET',
        url: pathOf(auditReceiptRoute, { check_id: check.check_id }),
        headers: { 'x-api-key': keys[ACME]! },
      })
    ).json() as AuditReceipt;
    const entry = JSON.parse(receipt.leaf) as { decided_at: string };
    const assertion = {
      check_id: check.check_id,
      voice_id: voiceId,
      platform_name: ACME,
      intended_use: 'audiobook',
      decided_at: entry.decided_at,
      log_origin: 'vip.local/audit',
      receipt,
    };
    await verdictOf(await signedWith([authorizationAssertion(assertion)]), 'not_approved');
  });

  it('judges a file signed by a certificate no platform registered `signer_not_registered`', async () => {
    const ca = testCertificateAuthority('Unregistered CA', ACME);
    const leaf = testLeafCertificate({ commonName: `${ACME} signer`, organization: ACME, issuer: ca });
    const signed = await signedFile('a.pcm16.wav', 'audio/wav', await approval(voiceId), {
      certificateChain: [leaf.pem, ca.pem],
      privateKey: leaf.privateKey,
    });
    const result = await verdictOf(signed, 'signer_not_registered');
    expect(result.credentials.state).toBe('valid_untrusted');
  });

  it('judges credentials without an authorization `no_authorization_protected_voice`, and a malformed one `authorization_malformed`', async () => {
    const bare = await verdictOf(await signedWith([]), 'no_authorization_protected_voice');
    expect(bare.voice.protected_matches.map((match) => match.voice_id)).toContain(voiceId);
    const receipt = await approval(voiceId);
    const withSecret = { ...authorizationAssertionOf({ check_id: receipt.check_id, receipt }), license_token: 'vip_lic_secret' };
    const malformed = await verdictOf(await signedWith([authorizationAssertion(withSecret)]), 'authorization_malformed');
    expect(malformed.authorization.problems.join()).toMatch(/license_token/);
  });

  it('judges a file of a voice nobody protects, without a manifest, `no_credentials`, with credentials but no authorization `no_authorization`, and tells no owner', async () => {
    const decoded = await decodeAudio(speakerRecordings('so762:SPEAKER0024', 0, 1)[0]!, {
      maxBytes: 2 ** 24,
      maxSeconds: 60,
      minSeconds: 0,
    });
    const result = await verdictOf(pcm16Wav(decoded.samples), 'no_credentials');
    expect(result.voice.protected_matches).toEqual([]);
    expect(result.authorization.voice_id).toBeNull();
    const signed = await signedWithAssertions(pcm16Wav(decoded.samples), 'audio/wav', [], signers[ACME]!.signer);
    expect((await verdictOf(signed, 'no_authorization')).credentials.state).toBe('trusted');
  });
});

/**
 * Runs `work` while GET /healthz is asked every 10 ms, each waiting for the last; answers the work's
 * outcome and how long each /healthz took, in ms. A parse on the event loop would hold them all.
 */
async function whileProbingHealthz<T>(work: Promise<T>): Promise<[T, number[]]> {
  let settled = false;
  const outcome = work.finally(() => {
    settled = true;
  });
  const latencies: number[] = [];
  do {
    const started = performance.now();
    const response = await origin.app.inject({ method: 'GET', url: '/healthz' });
    latencies.push(performance.now() - started);
    expect(response.statusCode).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 10));
  } while (!settled);
  return [await outcome, latencies];
}

describe('POST /api/v1/provenance/verify: the audio watermark', { timeout: 120_000 }, () => {
  const DECODING = { maxBytes: limits.audioMaxBytes, maxSeconds: limits.audioMaxSeconds, minSeconds: 0 };
  /** The enrolled voice's utterance twice over, and another speaker's speech. */
  let speech: Float32Array;
  let otherSpeech: Float32Array;
  beforeAll(async () => {
    speech = await enrolledUtteranceTwice();
    // Two of the other speaker's utterances (7 s): one mark frame is 4.8 s.
    const [first, second] = await Promise.all(
      speakerRecordings('so762:SPEAKER0003', 0, 2).map(async (bytes) => (await decodeAudio(bytes, DECODING)).samples),
    );
    otherSpeech = new Float32Array(first!.length + second!.length);
    otherSpeech.set(first!);
    otherSpeech.set(second!, first!.length);
  });

  /**
   * What a platform's audio goes through before someone checks it, in process (`npm test` has no
   * ffmpeg): marked at 16 kHz, resampled to 22.05 kHz and back, 6 dB quieter, white noise at 35 dB
   * SNR, then a plain PCM16 WAV: no Content Credentials left.
   */
  const markedWav = (samples: Float32Array, id: string) => pcm16Wav(markPcm(samples, 16_000, { alg: WATERMARK_ALGORITHM, id }));

  async function markedAndDegraded(samples: Float32Array, id: string): Promise<Uint8Array> {
    const marked = markPcm(samples, 16_000, { alg: WATERMARK_ALGORITHM, id });
    const quieter = (await resampleThrough(await resampleThrough(marked, 16_000, 22_050), 22_050, 16_000)).map((sample) => sample * 0.5);
    const power = quieter.reduce((sum, sample) => sum + sample * sample, 0) / quieter.length;
    // Uniform noise of this spread has the wanted power (the variance of U(-0.5, 0.5) is 1/12).
    const spread = Math.sqrt((12 * power) / 10 ** (35 / 10));
    let seed = 12_345;
    const uniform = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31 - 0.5;
    };
    return pcm16Wav(quieter.map((sample) => sample + spread * uniform()));
  }

  it('reads the mark of a stripped, resampled, noisier file and judges it by the decision it was issued for (`watermark_authorized`)', async () => {
    // Fixed ids, one per test: a run reads the same bits every time (and no two tests share an id).
    const id = '5a3c0e91b7';
    const receipt = await approval(voiceId, ACME, { watermarkId: id });
    const result = await verdictOf(await markedAndDegraded(speech, id), 'watermark_authorized');
    expect(result.watermark).toMatchObject({ found: true, alg: WATERMARK_ALGORITHM, id, issued: true, check_id: receipt.check_id });
    expect(result.credentials.present).toBe(false);
    expect(result.authorization).toMatchObject({
      present: false,
      check_id: receipt.check_id,
      voice_id: voiceId,
      platform_name: ACME,
      intended_use: 'audiobook',
      receipt_verified: true,
      approved: true,
      redeemed: true,
      consent_standing: true,
      license_standing: true,
      receipt,
    });
    expect(result.voice).toMatchObject({ compared_with: voiceId, is_same_speaker: true });

    // What the decision rests on still counts: with consent withdrawn, the mark reads "revoked since".
    expect((await setSynthesisConsent(voiceId, 'withdrawn')).statusCode).toBe(200);
    try {
      await verdictOf(await markedAndDegraded(speech, id), 'authorization_revoked_since');
    } finally {
      expect((await setSynthesisConsent(voiceId, 'active')).statusCode).toBe(200);
    }
  });

  it('judges a real mark copied onto another speaker’s audio `voice_mismatch`, never authorized, and tells the owner', async () => {
    const id = '0123456789';
    const receipt = await approval(voiceId, ACME, { watermarkId: id });
    const before = (await failureEvents(voiceId)).length;
    const result = await verdictOf(markedWav(otherSpeech, id), 'voice_mismatch');
    expect(result.watermark).toMatchObject({ found: true, id, issued: true, check_id: receipt.check_id });
    expect(result.voice).toMatchObject({ compared_with: voiceId, is_same_speaker: false });
    expect(result.authorization).toMatchObject({ approved: true, redeemed: true, consent_standing: true, license_standing: true });
    expect((await failureEvents(voiceId)).at(-1)!.payload).toMatchObject({
      verdict: 'voice_mismatch',
      authorization_check_id: receipt.check_id,
    });
    expect((await failureEvents(voiceId)).length).toBe(before + 1);
  });

  it('reads a mark through a real codec (the committed MP3 64 kbps fixture) in a format without credentials of ours', async () => {
    // fixtures/watermark: flite speech marked with this id, then MP3 64 kbps. Registered here to the
    // enrolled voice's decision, it is a mark on another voice.
    const receipt = await approval(voiceId, ACME, { watermarkId: 'a1b2c3d4e5' });
    const result = await verdictOf(new Uint8Array(readFileSync(path.join(fixturesDir, 'watermark/a.mp3-64k.mp3'))), 'voice_mismatch');
    expect(result.watermark).toMatchObject({ found: true, id: 'a1b2c3d4e5', check_id: receipt.check_id });
  });

  it('judges a mark this service never issued `watermark_not_issued`', async () => {
    const id = 'fedcba9876';
    const result = await verdictOf(markedWav(speech, id), 'watermark_not_issued');
    expect(result.watermark).toEqual({ found: true, alg: WATERMARK_ALGORITHM, windows_read: expect.any(Number), id, issued: false });
    expect(result.authorization.check_id).toBeNull();
  });

  it('judges a file by both its credentials and its mark: the same decision is `authorized`, another is `credentials_watermark_mismatch`', async () => {
    const id = '13579bdf02';
    const marked = await approval(voiceId, ACME, { watermarkId: id });
    const other = await approval(voiceId);
    const wav = markedWav(speech, id);
    const sign = (receipt: AuditReceipt) =>
      embedAuthorization(wav, 'audio/wav', { check_id: receipt.check_id, receipt }, signers[ACME]!.signer, {
        softwareAgent: 'Acme TTS v3',
      });
    const both = await verdictOf(await sign(marked), 'authorized');
    expect(both.watermark).toMatchObject({ found: true, id, check_id: marked.check_id });
    const mismatch = await verdictOf(await sign(other), 'credentials_watermark_mismatch');
    expect(mismatch.authorization.check_id).toBe(other.check_id);
    expect(mismatch.watermark).toMatchObject({ found: true, id, check_id: marked.check_id });
  });

  it('accepts every format enrollment takes: an unmarked Opus file reads no mark and no credentials', async () => {
    const result = await verdictOf(audioFixture('a.opus'), 'no_credentials_protected_voice');
    expect(result.watermark.found).toBe(false);
  });
});

describe('the C2PA soft-binding resolution API', { timeout: 120_000 }, () => {
  const id = '2468ace013';
  let receipt: AuditReceipt;
  let markedSpeech: Uint8Array;
  beforeAll(async () => {
    receipt = await approval(voiceId, ACME, { watermarkId: id });
    markedSpeech = pcm16Wav(markPcm(await enrolledUtteranceTwice(), 16_000, { alg: WATERMARK_ALGORITHM, id }));
  });

  const get = (url: string, headers: Record<string, string> = {}) => origin.app.inject({ method: 'GET', url, headers });
  const byBinding = (value: string, alg = WATERMARK_ALGORITHM) =>
    get(`${pathOf(softBindingByBindingRoute)}?alg=${encodeURIComponent(alg)}&value=${encodeURIComponent(value)}`, {
      'x-api-key': keys[OTHER]!,
    });
  const byContent = (payload: FormData, query = '') =>
    origin.app.inject({
      method: 'POST',
      url: `${pathOf(softBindingByContentRoute)}${query}`,
      headers: { 'x-api-key': keys[OTHER]! },
      payload,
    });
  const deposit = (manifest: Uint8Array, watermarkId: string, platform = ACME) => {
    const form = new FormData();
    form.append('manifest', new Blob([manifest]), 'manifest.c2pa');
    form.append('watermark_id', watermarkId);
    return origin.app.inject({
      method: 'POST',
      url: pathOf(depositManifestRoute),
      headers: { 'x-api-key': keys[platform]! },
      payload: form,
    });
  };
  const lookups = async () =>
    (await origin.database.db.select().from(auditPending).where(sql`${auditPending.record} ->> 'kind' = 'provenance.lookup'`)).map(
      (row) => row.record as { voice_id: string | null; reason: string },
    );

  it('names the algorithm it resolves', async () => {
    const response = await get(pathOf(softBindingAlgorithmsRoute));
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ watermarks: [{ alg: WATERMARK_ALGORITHM }], fingerprints: [] });
  });

  it('resolves an id (hex, or the base64 of its bytes) to the authorization it was issued for, and audits the lookup', async () => {
    const expected = {
      matches: [
        {
          manifestId: expect.any(String),
          similarityScore: 100,
          authorization: {
            check_id: receipt.check_id,
            voice_id: voiceId,
            platform_name: ACME,
            intended_use: 'audiobook',
            decided_at: JSON.parse(receipt.leaf).decided_at,
            redemption_check_id: expect.any(String),
            receipt,
            manifest_deposited: false,
          },
        },
      ],
    };
    for (const value of [id, Buffer.from(id, 'hex').toString('base64')]) {
      const response = await byBinding(value);
      expect(response.statusCode, response.body).toBe(200);
      expect(softBindingQueryResultSchema.parse(response.json())).toEqual(expected);
    }
    expect((await lookups()).at(-1)).toMatchObject({
      voice_id: voiceId,
      reason: `lookup=binding;authorization=${receipt.check_id};matches=1`,
    });
  });

  it('matches nothing for an id never issued or another algorithm, and refuses a value that is no id', async () => {
    for (const response of [await byBinding('ffffffffff'), await byBinding(id, 'com.example.other-watermark.1')]) {
      expect(response.statusCode).toBe(200);
      expect(response.json()).toEqual({ matches: [] });
    }
    expectProblem(await byBinding('not an id'), 422, 'validation_failed');
    expectProblem(await get(`${pathOf(softBindingByBindingRoute)}?alg=${WATERMARK_ALGORITHM}`), 422, 'validation_failed');
  });

  it('reads the mark of an uploaded file (byContent), finds nothing in unmarked audio, and refuses what is not audio', async () => {
    const marked = await byContent(audioForm({ audio: markedSpeech }), '?maxResults=5');
    expect(marked.statusCode, marked.body).toBe(200);
    expect(softBindingQueryResultSchema.parse(marked.json()).matches.map((match) => match.authorization.check_id)).toEqual([
      receipt.check_id,
    ]);
    expect((await lookups()).at(-1)?.reason).toBe(`lookup=content;authorization=${receipt.check_id};matches=1`);
    const unmarked = await byContent(audioForm({ audio: audioFixture('a.opus') }));
    expect(unmarked.json()).toEqual({ matches: [] });
    expectProblem(await byContent(audioForm({ audio: new TextEncoder().encode('plain text') })), 422, 'unsupported_format');
    expectProblem(await byContent(audioForm({ audio: new Uint8Array(0) })), 422, 'empty_audio');
    expectProblem(await byContent(audioForm({}, { note: 'no file' })), 422, 'validation_failed');
  });

  it('keeps the manifest the marking platform deposited, one per mark, and serves it as application/c2pa', async () => {
    const manifest = storeOfWav(await signedFile('a.pcm16.wav', 'audio/wav', receipt));
    expectProblem(await deposit(manifest, id, OTHER), 403, 'platform_mismatch');
    expectProblem(await deposit(manifest, 'ffffffffff'), 404, 'not_found');
    expectProblem(await deposit(new TextEncoder().encode('not a manifest'), id), 422, 'malformed_manifest');
    expectProblem(await deposit(new Uint8Array(limits.manifestStoreMaxBytes + 1), id), 413, 'payload_too_large');
    const deposited = await deposit(manifest, id);
    expect(deposited.statusCode, deposited.body).toBe(201);
    const { manifestId } = deposited.json() as { manifestId: string };
    expectProblem(await deposit(manifest, id), 409, 'conflict');

    const match = softBindingQueryResultSchema.parse((await byBinding(id)).json()).matches[0]!;
    expect(match).toMatchObject({ manifestId, authorization: { manifest_deposited: true } });
    const fetched = await get(pathOf(manifestRoute, { manifestId }));
    expect(fetched.statusCode).toBe(200);
    expect(fetched.headers['content-type']).toContain('application/c2pa');
    expect(new Uint8Array(fetched.rawPayload)).toEqual(manifest);
    expectProblem(await get(pathOf(manifestRoute, { manifestId: randomUUID() })), 404, 'not_found');
  });

  it('limits anonymous lookups per IP', async () => {
    atStartOfRateWindow(origin);
    const anonymous = () => get(`${pathOf(softBindingByBindingRoute)}?alg=${WATERMARK_ALGORITHM}&value=ffffffffff`);
    for (let call = 0; call < limits.provenanceLookupAnonymousPerMinute; call++) expect((await anonymous()).statusCode).toBe(200);
    expectProblem(await anonymous(), 429, 'rate_limited');
  });
});

/** The enrolled voice's utterance twice over, decoded as verify decodes it (5.7 s: one mark frame is 4.8 s). */
async function enrolledUtteranceTwice(): Promise<Float32Array> {
  const decoding = { maxBytes: limits.audioMaxBytes, maxSeconds: limits.audioMaxSeconds, minSeconds: 0 };
  const utterance = (await decodeAudio(audioFixture('a.pcm16.wav'), decoding)).samples;
  const twice = new Float32Array(utterance.length * 2);
  twice.set(utterance);
  twice.set(utterance, utterance.length);
  return twice;
}

/** `samples` at `from` Hz resampled to `to` Hz, as the service resamples. */
async function resampleThrough(samples: Float32Array, from: number, to: number): Promise<Float32Array> {
  const resampler = await createResampler(from, to);
  // A copy: the resampler reuses the buffer it answered with for the next call.
  const head = resampler.process(samples).slice();
  const tail = resampler.flush();
  resampler.destroy();
  const out = new Float32Array(head.length + tail.length);
  out.set(head);
  out.set(tail, head.length);
  return out;
}

describe('POST /api/v1/provenance/verify: bad input is refused and nothing is stored', { timeout: 120_000 }, () => {
  const refused = async (bytes: Uint8Array | FormData, status: number, code: string) => {
    const [queued, events] = [await verificationsQueued(), (await failureEvents(voiceId)).length];
    const payload = bytes instanceof FormData ? bytes : audioForm({ audio: bytes });
    const response = await origin.app.inject({
      method: 'POST',
      url: pathOf(verifyProvenanceRoute),
      headers: { 'x-api-key': keys[OTHER]! },
      payload,
    });
    const problem = expectProblem(response, status, code);
    expect([await verificationsQueued(), (await failureEvents(voiceId)).length]).toEqual([queued, events]);
    return problem;
  };

  it('refuses a file that is not audio, an empty one, a truncated one and one hours long', async () => {
    await refused(new TextEncoder().encode('not audio at all, just text'), 422, 'unsupported_format');
    await refused(new Uint8Array(0), 422, 'empty_audio');
    await refused(audioFixture('a.pcm16.wav').subarray(0, 30), 422, 'corrupt_audio');
    await refused(audioFixture('silence-20min.flac'), 422, 'too_long');
    await refused(audioForm({}, { note: 'no file' }), 422, 'validation_failed');
  });

  it('refuses a file whose manifest is cut short', async () => {
    const signed = await signedFile('a.pcm16.wav', 'audio/wav', await approval(voiceId));
    await refused(signed.subarray(0, signed.length - 4_000), 422, 'malformed_manifest');
  });

  it('refuses a huge manifest and one with too many assertions', async () => {
    await refused(await signedWith([PADDING_ASSERTION]), 413, 'payload_too_large');
    // Counted from the JUMBF boxes: the 300, the created action and the hash binding.
    expect((await refused(await signedWith(manyAssertions(300)), 422, 'malformed_manifest')).detail).toMatch(/302 assertions/);
  });

  it('measures the manifest store c2pa-rs parses: one behind a 64-bit box header or a decoy store is refused as too large', async () => {
    const huge = await signedWith([PADDING_ASSERTION]);
    const decoy = storeOfWav(await signedWith([]));
    for (const hidden of [withLargeSizeStoreHeader(huge), withDecoyStore(huge, decoy)]) {
      expect((await refused(hidden, 413, 'payload_too_large')).detail).toMatch(/manifest store is larger than 262144 bytes/);
    }
    // Beside a store within the limit, a decoy makes the file ambiguous.
    expect((await refused(withDecoyStore(await signedWith([]), decoy), 422, 'malformed_manifest')).detail).toMatch(/outside the one/);
  });

  it('refuses a flood of assertions before c2pa-rs parses it, and files of 100,000 and 1,000,000 boxes, while /healthz answers', async () => {
    const hostile = [
      { file: await signedWith(manyAssertions(900)), status: 422, code: 'malformed_manifest', detail: /902 assertions/ },
      { file: withFreeBoxes(audioFixture('a.m4a'), 100_000), status: 413, code: 'payload_too_large', detail: /more than 2048 boxes/ },
      { file: withFreeBoxes(audioFixture('a.m4a'), 1_000_000), status: 413, code: 'payload_too_large', detail: /more than 2048 boxes/ },
    ];
    for (const { file, status, code, detail } of hostile) {
      const payload = audioForm({ audio: file });
      const started = performance.now();
      const [response, healthz] = await whileProbingHealthz(verifyFile(payload));
      expect(expectProblem(response, status, code).detail).toMatch(detail);
      // The bounds: refused well under a second (generous here for a loaded two-core box; it took
      // 58 s and never for the box files, 0.5 s of main thread for the flood), /healthz within 100 ms throughout.
      expect(performance.now() - started).toBeLessThan(2_000);
      expect(healthz.length).toBeGreaterThan(0);
      expect(Math.max(...healthz)).toBeLessThan(100);
    }
  });

  it('refuses a file over the audio size limit', async () => {
    await refused(new Uint8Array(20 * 1024 * 1024 + 1), 413, 'payload_too_large');
  });

  it('limits anonymous callers per IP, before reading the upload', async () => {
    const anonymous = () => origin.app.inject({ method: 'POST', url: pathOf(verifyProvenanceRoute), payload: {} });
    atStartOfRateWindow(origin);
    for (let call = 0; call < limits.provenanceVerifyAnonymousPerMinute; call++) expect((await anonymous()).statusCode).toBe(415);
    const limited = await anonymous();
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // A page of another origin (the edge's playground) reads the problem and when to try again.
    expect(limited.headers['access-control-allow-origin']).toBe('*');
    expect(limited.headers['access-control-expose-headers']).toContain('retry-after');
  });

  it('lets pages of other origins read the verification and the log’s verifier key, and no other route', async () => {
    const verified = await verifyFile(audioFixture('a.pcm16.wav'));
    expect(verified.statusCode).toBe(200);
    expect(verified.headers['access-control-allow-origin']).toBe('*');
    expect((await origin.app.inject({ method: 'GET', url: '/tlog/vkey' })).headers['access-control-allow-origin']).toBe('*');
    expect((await origin.app.inject({ method: 'GET', url: '/tlog/checkpoint' })).headers['access-control-allow-origin']).toBeUndefined();
    const receiptAnswer = await origin.app.inject({ method: 'GET', url: pathOf(auditReceiptRoute, { check_id: randomUUID() }) });
    expect(receiptAnswer.headers['access-control-allow-origin']).toBeUndefined();
  });
});

describe('signing certificates: registration, rotation and revocation', { timeout: 120_000 }, () => {
  it('registers a platform’s certificate by its key or an administrator, and refuses duplicates, owners and garbage', async () => {
    const { caPem } = platformSigner('Registrar');
    const platform = await platformWithApiKey(origin, adminToken, 'Registrar');
    const created = await registerCertificate(caPem, { 'x-api-key': platform.api_key });
    expect(created.statusCode, created.body).toBe(201);
    expect(signingCertificateSchema.parse(created.json())).toMatchObject({ platform_name: 'Registrar', is_ca: true, revoked_at: null });
    expectProblem(await registerCertificate(caPem, { 'x-api-key': platform.api_key }), 409, 'conflict');
    expectProblem(await registerCertificate(caPem, { 'x-api-key': platform.api_key }, ACME), 403, 'platform_mismatch');
    expectProblem(await registerCertificate(platformSigner('x').caPem, bearer(adminToken)), 422, 'validation_failed');
    expect((await registerCertificate(platformSigner('y').caPem, bearer(adminToken), 'Registrar')).statusCode).toBe(201);
    expectProblem(await registerCertificate(platformSigner('z').caPem, bearer(owner.accessToken), 'Registrar'), 403, 'forbidden');
    // A signing (leaf) certificate is registered too, unless it carries no extended key usage C2PA verifiers accept.
    const leaf = testLeafCertificate({ commonName: 'Registrar signer', issuer: testCertificateAuthority('Registrar CA') });
    const registeredLeaf = await registerCertificate(leaf.pem, { 'x-api-key': platform.api_key });
    expect(registeredLeaf.statusCode, registeredLeaf.body).toBe(201);
    expect(registeredLeaf.json()).toMatchObject({ is_ca: false, subject: expect.stringContaining('CN=Registrar signer') });
    const serverOnly = testLeafCertificate({
      commonName: 'Registrar web',
      issuer: testCertificateAuthority('Registrar CA'),
      extendedKeyUsage: ['1.3.6.1.5.5.7.3.1'],
    });
    const refusedLeaf = expectProblem(
      await registerCertificate(serverOnly.pem, { 'x-api-key': platform.api_key }),
      422,
      'validation_failed',
    );
    expect(JSON.stringify(refusedLeaf)).toMatch(/emailProtection/);
    expectProblem(
      await registerCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', { 'x-api-key': platform.api_key }),
      422,
      'validation_failed',
    );
    const listed = await origin.app.inject({
      method: 'GET',
      url: pathOf(registerSigningCertificateRoute),
      headers: { 'x-api-key': platform.api_key },
    });
    expect(listed.json().certificates).toHaveLength(3);
    // Another platform's certificate answers like a missing one.
    const revokeOther = await origin.app.inject({
      method: 'POST',
      url: pathOf(revokeSigningCertificateRoute, { certificate_id: created.json().certificate_id }),
      headers: { 'x-api-key': keys[ACME]! },
    });
    expectProblem(revokeOther, 404, 'not_found');
  });

  it('rotates: a file signed under the new certificate verifies, and once the old one is revoked files signed under it do not', async () => {
    const name = 'Rotating TTS';
    const platform = await platformWithApiKey(origin, adminToken, name);
    keys[name] = platform.api_key;
    await license(voiceId, name);
    const [oldSigner, newSigner] = [platformSigner(name), platformSigner(name)];
    const oldCertificate = (await registerCertificate(oldSigner.caPem, { 'x-api-key': platform.api_key })).json();
    const underOld = await signedFile('a.mp3', 'audio/mpeg', await approval(voiceId, name), oldSigner.signer);
    await verdictOf(underOld, 'authorized');

    expect((await registerCertificate(newSigner.caPem, { 'x-api-key': platform.api_key })).statusCode).toBe(201);
    const underNew = await signedFile('a.mp3', 'audio/mpeg', await approval(voiceId, name), newSigner.signer);
    await verdictOf(underNew, 'authorized');
    await verdictOf(underOld, 'authorized');

    const revoked = await origin.app.inject({
      method: 'POST',
      url: pathOf(revokeSigningCertificateRoute, { certificate_id: oldCertificate.certificate_id }),
      headers: { 'x-api-key': platform.api_key },
    });
    expect(revoked.statusCode).toBe(200);
    expect(revoked.json().revoked_at).not.toBeNull();
    await verdictOf(underOld, 'signer_not_registered');
    await verdictOf(underNew, 'authorized');
  });

  it('trusts a registered leaf certificate by its fingerprint: binds it to its platform, rotates and revokes it', async () => {
    const name = 'Leaf TTS';
    const platform = await platformWithApiKey(origin, adminToken, name);
    keys[name] = platform.api_key;
    await license(voiceId, name);
    // Two signing certificates of one CA; only the leaves are ever registered, never the CA.
    const ca = testCertificateAuthority(`${name} CA`, name);
    const [first, second] = [1, 2].map((n) => testLeafCertificate({ commonName: `${name} signer ${n}`, organization: name, issuer: ca }));
    const signerOf = (leaf: typeof first) => ({ certificateChain: [leaf!.pem, ca.pem], privateKey: leaf!.privateKey });
    const firstRegistration = (await registerCertificate(first!.pem, { 'x-api-key': platform.api_key })).json();
    expect(firstRegistration.is_ca).toBe(false);

    const underFirst = await signedFile('a.m4a', 'audio/mp4', await approval(voiceId, name), signerOf(first));
    const authorized = await verdictOf(underFirst, 'authorized');
    expect(authorized.credentials).toMatchObject({
      state: 'trusted',
      failure_codes: [],
      signer: { common_name: `${name} signer 1`, registered_platform: name },
    });
    // The same CA's other certificate is not registered, so it is nobody's.
    const underSecond = await signedFile('a.m4a', 'audio/mp4', await approval(voiceId, name), signerOf(second));
    await verdictOf(underSecond, 'signer_not_registered');
    // The leaf is this platform's, not Acme's: an Acme approval signed with it is not Acme's file.
    await verdictOf(
      await signedFile('a.pcm16.wav', 'audio/wav', await approval(voiceId, ACME), signerOf(first)),
      'signer_not_the_platform',
    );

    // Rotation: register the second, then revoke the first.
    expect((await registerCertificate(second!.pem, { 'x-api-key': platform.api_key })).statusCode).toBe(201);
    await verdictOf(underSecond, 'authorized');
    const revoked = await origin.app.inject({
      method: 'POST',
      url: pathOf(revokeSigningCertificateRoute, { certificate_id: firstRegistration.certificate_id }),
      headers: { 'x-api-key': platform.api_key },
    });
    expect(revoked.statusCode).toBe(200);
    await verdictOf(underFirst, 'signer_not_registered');
    await verdictOf(underSecond, 'authorized');
  });
});
