import { randomUUID, sign as signBytes } from 'node:crypto';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  checkpointText,
  formatTlogProof,
  limits,
  noteKeyId,
  noteSignatureLine,
  type ProvenanceVerdict,
  type ProvenanceVerification,
  pathOf,
  provenanceVerificationSchema,
  rfc6962LeafHash,
  rootFromInclusionProof,
  signingCertificateSchema,
  TRAINED_ALGORITHMIC_MEDIA,
} from '@vip/shared-schema';
import type { AuditReceipt } from '@vip/shared-schema/client';
import { authorizationAssertionOf, embedAuthorization, type PlatformSigner } from '@vip/shared-schema/client/provenance';
import { signAsset } from '@vip/shared-schema/provenance/c2pa';
import { auditReceiptRoute } from '@vip/shared-schema/routes/origin/audit';
import {
  registerSigningCertificateRoute,
  revokeSigningCertificateRoute,
  verifyProvenanceRoute,
} from '@vip/shared-schema/routes/origin/provenance';
import { createLicenseRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { testCertificateAuthority, testLeafCertificate } from '@vip/shared-schema/testing/provenance-ca';
import { audioByteOffset, CREDENTIAL_FORMATS, editText, platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { testApprovalReceipt } from '@vip/shared-schema/testing/provenance-receipt';
import { and, eq, sql } from 'drizzle-orm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type CheckpointSigner, createCheckpointSigner } from '../audit/checkpoints.js';
import { queueAuditRecords } from '../audit/queue.js';
import { generateSigningJwk } from '../auth/access-tokens.js';
import { auditPending, domainEvents } from '../db/schema.js';
import { gateRecord } from '../testing/audit-records.js';
import { pcm16Wav } from '../testing/fixtures.js';
import { atStartOfRateWindow, bearer, loggedIn, platformWithApiKey, startTestOrigin, type TestOrigin } from '../testing/origin.js';
import { expectProblem } from '../testing/problem.js';
import { audioFixture } from '../testing/provenance-files.js';
import { audioForm, EMBEDDING_LIKE, speakerRecordings, startTestEngine } from '../testing/voiceprint.js';
import { insertEnrolledVoice } from '../testing/voices.js';
import { decodeAudio } from '../voiceprint/decode.js';
import type { VoiceprintEngine } from '../voiceprint/index.js';

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
    payload: { platform_name: platformName, scopes: ['audiobook'], expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString() },
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

const verifyFile = (bytes: Uint8Array, headers: Record<string, string> = { 'x-api-key': keys[OTHER]! }) =>
  origin.app.inject({ method: 'POST', url: pathOf(verifyProvenanceRoute), headers, payload: audioForm({ audio: bytes }) });

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
  assertions: { label: string; data: unknown; kind?: 'Json' | 'Cbor' }[],
  { file, mime }: Pick<(typeof CREDENTIAL_FORMATS)[number], 'file' | 'mime'> = { file: 'a.pcm16.wav', mime: 'audio/wav' },
) =>
  signAsset(
    audioFixture(file),
    mime,
    { claimGenerator: { name: 'test', version: '1' }, assertions: [CREATED, ...assertions] },
    {
      certificateChain: signers[ACME]!.signer.certificateChain.map(
        (pem) => new Uint8Array(Buffer.from(String(pem).replaceAll(/-----[^-]+-----|\s/g, ''), 'base64')),
      ),
      algorithm: 'es256',
      sign: (data) => signBytes('sha256', data, { key: signers[ACME]!.signer.privateKey, dsaEncoding: 'ieee-p1363' }),
    },
  );
const CREATED = { label: 'c2pa.actions.v2', data: { actions: [{ action: 'c2pa.created', digitalSourceType: TRAINED_ALGORITHMIC_MEDIA }] } };
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

  it('judges a file of a voice nobody protects, without a manifest, `no_credentials`, and tells no owner', async () => {
    const decoded = await decodeAudio(speakerRecordings('so762:SPEAKER0024', 0, 1)[0]!, {
      maxBytes: 2 ** 24,
      maxSeconds: 60,
      minSeconds: 0,
    });
    const result = await verdictOf(pcm16Wav(decoded.samples), 'no_credentials');
    expect(result.voice.protected_matches).toEqual([]);
    expect(result.authorization.voice_id).toBeNull();
  });
});

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

  it('refuses a file that is not audio, and audio in a container without Content Credentials', async () => {
    await refused(new TextEncoder().encode('not audio at all, just text'), 422, 'unsupported_format');
    await refused(audioFixture('a.opus'), 422, 'unsupported_format');
    await refused(audioForm({}, { note: 'no file' }), 422, 'validation_failed');
  });

  it('refuses a file whose manifest is cut short', async () => {
    const signed = await signedFile('a.pcm16.wav', 'audio/wav', await approval(voiceId));
    await refused(signed.subarray(0, signed.length - 4_000), 422, 'malformed_manifest');
  });

  it('refuses a huge manifest and one with too many assertions', async () => {
    const huge = await signedWith([{ label: 'local.test.padding', data: { padding: 'x'.repeat(300 * 1024) } }]);
    await refused(huge, 413, 'payload_too_large');
    const many = await signedWith(Array.from({ length: 300 }, (_, at) => ({ label: `local.test.a${at}`, data: { at } })));
    expect((await refused(many, 422, 'malformed_manifest')).detail).toMatch(/301 assertions/);
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
