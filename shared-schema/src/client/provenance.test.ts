import { sign as signBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { signAsset } from '../provenance/c2pa.js';
import { readCredentials } from '../provenance/credentials.js';
import {
  AUTHORIZATION_ASSERTION_LABEL,
  type AuthorizationAssertion,
  authorizationAssertionBytes,
  type OfflineProvenanceVerdict,
  PROVENANCE_CHECKS,
  type ProvenanceCheck,
  type ProvenanceMimeType,
  TRAINED_ALGORITHMIC_MEDIA,
} from '../provenance.js';
import { testCertificateAuthority, testLeafCertificate } from '../testing/provenance-ca.js';
import { audioByteOffset, CREDENTIAL_FORMATS, editText } from '../testing/provenance-files.js';
import { testApprovalReceipt } from '../testing/provenance-receipt.js';
import { TlogFormatError } from '../tlog.js';
import { authorizationAssertionOf, embedAuthorization, type OfflineVerification, verifyFile as verifyOffline } from './provenance.js';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../../fixtures/audio/${name}`, import.meta.url)));
const FORMATS = CREDENTIAL_FORMATS.map(({ file, mime }): [string, ProvenanceMimeType] => [file, mime]);

const ca = testCertificateAuthority('Acme TTS Content Credentials CA', 'Acme TTS');
const leaf = testLeafCertificate({ commonName: 'Acme TTS signer', organization: 'Acme TTS', issuer: ca });
const signer = { certificateChain: [leaf.pem, ca.pem], privateKey: leaf.privateKey };

const except = (...ran: ProvenanceCheck[]) => PROVENANCE_CHECKS.filter((check) => !ran.includes(check));
/** What each offline verdict says it did not check: the decision only once the receipt proves it, never what only the service knows. */
const NOT_CHECKED_OFFLINE: Record<OfflineProvenanceVerdict, ProvenanceCheck[]> = {
  no_credentials: except(),
  altered: except(),
  credentials_invalid: except(),
  no_authorization: except(),
  authorization_malformed: except(),
  receipt_invalid: except('receipt'),
  not_approved: except('receipt', 'approval'),
  signer_not_registered: except('receipt', 'approval'),
  authorized: except('receipt', 'approval'),
};

/** `verifyFile`, and every answer holds what it checked, or null and named in `not_checked`. */
async function verifyFile(...args: Parameters<typeof verifyOffline>): Promise<OfflineVerification> {
  const result = await verifyOffline(...args);
  expect(result.not_checked, result.verdict).toEqual(NOT_CHECKED_OFFLINE[result.verdict]);
  expect(result.authorization.receipt_verified === null).toBe(result.not_checked.includes('receipt'));
  expect(result.authorization.approved === null).toBe(result.not_checked.includes('approval'));
  expect(result.credentials.signer?.registered_platform ?? null).toBeNull();
  return result;
}

describe('embedAuthorization', { timeout: 60_000 }, () => {
  it.each(FORMATS)('writes a signed manifest with the created action and the authorization into %s', async (name, mime) => {
    const { receipt, entry } = await testApprovalReceipt();
    const signed = await embedAuthorization(fixture(name), mime, { check_id: entry.check_id, receipt }, signer, {
      softwareAgent: 'Acme TTS 3',
    });

    const credentials = await readCredentials(signed, mime, { trustAnchors: ca.pem });
    expect(credentials?.state).toBe('trusted');
    expect(credentials?.synthetic).toBe(true);
    expect(credentials?.signer.common_name).toBe('Acme TTS signer');
    expect(credentials?.authorization).toEqual({
      present: true,
      valid: true,
      assertion: {
        check_id: entry.check_id,
        voice_id: entry.voice_id,
        platform_name: 'Acme TTS',
        intended_use: 'audiobook',
        decided_at: entry.decided_at,
        log_origin: 'vip.test/audit',
        receipt,
      },
    });
    // Signed by a CA the reader was not told to trust: intact, but not trusted.
    const other = testCertificateAuthority('Someone else');
    expect((await readCredentials(signed, mime, { trustAnchors: other.pem }))?.state).toBe('valid_untrusted');
  });

  it('signs with Ed25519 keys too', async () => {
    const edCa = testCertificateAuthority('Ed CA');
    const edLeaf = testLeafCertificate({ commonName: 'Ed signer', issuer: edCa, ed25519: true });
    const { receipt, entry } = await testApprovalReceipt();
    const signed = await embedAuthorization(
      fixture('a.mp3'),
      'audio/mpeg',
      { check_id: entry.check_id, receipt },
      {
        certificateChain: [edLeaf.der, edCa.der],
        privateKey: edLeaf.privateKey,
      },
    );
    expect((await readCredentials(signed, 'audio/mpeg', { trustAnchors: edCa.pem }))?.state).toBe('trusted');
  });

  it('refuses a receipt of another check, or of a decision that was not an approval', async () => {
    const { receipt } = await testApprovalReceipt();
    await expect(embedAuthorization(fixture('a.mp3'), 'audio/mpeg', { check_id: crypto.randomUUID(), receipt }, signer)).rejects.toThrow(
      TlogFormatError,
    );
    const blocked = await testApprovalReceipt({ decision: 'deny', action: 'authorization_denied' });
    expect(() => authorizationAssertionOf({ check_id: blocked.entry.check_id, receipt: blocked.receipt })).toThrow(/not of an approved/);
  });

  it('fixes the assertion bytes: canonical JSON, keys in code-unit order, the approval token only when given', async () => {
    const { receipt, entry } = await testApprovalReceipt();
    const assertion = authorizationAssertionOf({ check_id: entry.check_id, receipt });
    const text = new TextDecoder().decode(authorizationAssertionBytes(assertion));
    expect(Object.keys(JSON.parse(text))).toEqual([
      'check_id',
      'decided_at',
      'intended_use',
      'log_origin',
      'platform_name',
      'receipt',
      'voice_id',
    ]);
    expect(text).toBe(new TextDecoder().decode(authorizationAssertionBytes(JSON.parse(text))));
    expect(text).not.toMatch(/\s"|":\s/);
    const variantB = authorizationAssertionOf({ check_id: entry.check_id, receipt, approval_token: 'eyJ.x.y' });
    expect(JSON.parse(new TextDecoder().decode(authorizationAssertionBytes(variantB))).approval_token).toBe('eyJ.x.y');
    expect(() => authorizationAssertionBytes({ ...assertion, license_token: 'secret' } as never)).toThrow();
    expect(AUTHORIZATION_ASSERTION_LABEL).toMatch(/^local\.vip\./);
  });
});

/** A WAV signed by the test platform with the created action and whatever authorization assertion a forger writes. */
const signedWithAssertion = (assertion: unknown) =>
  signAsset(
    fixture('a.pcm16.wav'),
    'audio/wav',
    {
      claimGenerator: { name: 'test', version: '1' },
      assertions: [
        { label: 'c2pa.actions.v2', data: { actions: [{ action: 'c2pa.created', digitalSourceType: TRAINED_ALGORITHMIC_MEDIA }] } },
        { label: AUTHORIZATION_ASSERTION_LABEL, data: assertion, kind: 'Json' },
      ],
    },
    {
      certificateChain: [leaf.der, ca.der],
      algorithm: 'es256',
      sign: (data) => signBytes('sha256', data, { key: leaf.privateKey, dsaEncoding: 'ieee-p1363' }),
    },
  );

describe('verifyFile (offline, no service)', { timeout: 60_000 }, () => {
  it.each(FORMATS)(
    'judges a signed %s `authorized` against the saved log key, checkpoint and CA, and `altered` once a byte changed',
    async (name, mime) => {
      const { receipt, entry, verifierKey, checkpoint } = await testApprovalReceipt();
      const signed = await embedAuthorization(fixture(name), mime, { check_id: entry.check_id, receipt }, signer);
      const options = { verifierKey, checkpoint, trustAnchors: ca.pem };

      const result = await verifyFile(signed, mime, options);
      expect(result.verdict).toBe('authorized');
      expect(result.credentials).toMatchObject({ present: true, state: 'trusted', failure_codes: [], synthetic: true });
      expect(result.credentials.signer).toMatchObject({ common_name: 'Acme TTS signer', registered_platform: null });
      expect(result.authorization).toEqual({
        present: true,
        problems: [],
        check_id: entry.check_id,
        voice_id: entry.voice_id,
        platform_name: 'Acme TTS',
        intended_use: 'audiobook',
        decided_at: entry.decided_at,
        // The test receipt's entry names no licence terms.
        license_terms_sha256: null,
        receipt_verified: true,
        approved: true,
        receipt,
        checkpoint: { size: 1, relation: 'same' },
      });
      expect(result.not_checked).toEqual(['signer_platform', 'voice', 'consent_and_license_today', 'redemption', 'protected_voices']);
      // Trusting the platform's signing certificate itself instead of its CA.
      expect((await verifyFile(signed, mime, { verifierKey, trustAnchors: leaf.pem })).credentials.state).toBe('trusted');

      const altered = Uint8Array.from(signed);
      altered[audioByteOffset(signed)]! ^= 0x01;
      const judged = await verifyFile(altered, mime, options);
      expect(judged.verdict).toBe('altered');
      expect(judged.credentials.failure_codes.some((code) => /^assertion\.(dataHash|bmffHash)\.mismatch$/.test(code))).toBe(true);
    },
  );

  it('judges an edited assertion invalid, a file without a manifest `no_credentials`, and an untrusted signer `signer_not_registered`', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const signed = await embedAuthorization(fixture('a.mp3'), 'audio/mpeg', { check_id: entry.check_id, receipt }, signer);
    const edited = await verifyFile(editText(signed, '"intended_use":"audiobook"', '"intended_use":"audioboox"'), 'audio/mpeg', {
      verifierKey,
      trustAnchors: ca.pem,
    });
    expect(edited.verdict).toBe('credentials_invalid');
    expect(edited.credentials.failure_codes).toContain('assertion.hashedURI.mismatch');
    expect((await verifyFile(fixture('a.mp3'), 'audio/mpeg', { verifierKey })).verdict).toBe('no_credentials');
    // The receipt holds; only the signer is nobody the verifier trusts.
    for (const trustAnchors of [undefined, testCertificateAuthority('Someone else').pem]) {
      const untrusted = await verifyFile(signed, 'audio/mpeg', { verifierKey, trustAnchors });
      expect(untrusted.verdict).toBe('signer_not_registered');
      expect(untrusted.authorization).toMatchObject({ receipt_verified: true, approved: true });
    }
  });

  it('judges credentials without our assertion `no_authorization` and a malformed one `authorization_malformed`, checking nothing of a decision', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const options = { verifierKey, trustAnchors: ca.pem };
    const withSecret = { ...authorizationAssertionOf({ check_id: entry.check_id, receipt }), license_token: 'vip_lic_secret' };
    const malformed = await verifyFile(await signedWithAssertion(withSecret), 'audio/wav', options);
    expect(malformed.verdict).toBe('authorization_malformed');
    expect(malformed.authorization).toMatchObject({ present: true, receipt_verified: null, approved: null });
    const bare = await signAsset(
      fixture('a.pcm16.wav'),
      'audio/wav',
      {
        claimGenerator: { name: 'test', version: '1' },
        assertions: [
          { label: 'c2pa.actions.v2', data: { actions: [{ action: 'c2pa.created', digitalSourceType: TRAINED_ALGORITHMIC_MEDIA }] } },
        ],
      },
      {
        certificateChain: [leaf.der, ca.der],
        algorithm: 'es256',
        sign: (data) => signBytes('sha256', data, { key: leaf.privateKey, dsaEncoding: 'ieee-p1363' }),
      },
    );
    expect((await verifyFile(bare, 'audio/wav', options)).verdict).toBe('no_authorization');
  });

  it('refuses a receipt checked against another log’s key, and one whose leaf is another check’s (`receipt_invalid`)', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt();
    const other = await testApprovalReceipt();
    const signed = await embedAuthorization(fixture('a.pcm16.wav'), 'audio/wav', { check_id: entry.check_id, receipt }, signer);
    const foreignKey = await verifyFile(signed, 'audio/wav', { verifierKey: other.verifierKey, trustAnchors: ca.pem });
    expect(foreignKey.verdict).toBe('receipt_invalid');
    expect(foreignKey.authorization).toMatchObject({ receipt_verified: false, approved: null });
    expect(foreignKey.authorization.problems.join()).toMatch(/does not verify against this log: the note has no valid signature/);

    // The assertion names one check, the receipt (a valid one, same log) proves another.
    const second = await testApprovalReceipt({ voice_id: entry.voice_id });
    const swapped: AuthorizationAssertion = { ...authorizationAssertionOf({ check_id: entry.check_id, receipt }), receipt: second.receipt };
    const anotherCheck = await verifyFile(await signedWithAssertion(swapped), 'audio/wav', {
      verifierKey: second.verifierKey,
      trustAnchors: ca.pem,
    });
    expect(anotherCheck.verdict).toBe('receipt_invalid');
    expect(anotherCheck.authorization.problems).toEqual(['the receipt is for another check']);
    // A leaf of the same check but another voice than the assertion says.
    const otherVoice = { ...authorizationAssertionOf({ check_id: entry.check_id, receipt }), voice_id: crypto.randomUUID() };
    const differing = await verifyFile(await signedWithAssertion(otherVoice), 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect(differing.verdict).toBe('receipt_invalid');
    expect(differing.authorization.problems.join()).toMatch(/differs from the assertion in voice_id/);
  });

  it('carries the licence terms’ hash read off the logged entry, and refuses an assertion naming other terms (`receipt_invalid`)', async () => {
    const terms = 'a'.repeat(64);
    const { receipt, entry, verifierKey } = await testApprovalReceipt({ license_terms_sha256: terms });
    const assertion = authorizationAssertionOf({ check_id: entry.check_id, receipt });
    expect(assertion.license_terms_sha256).toBe(terms);
    const signed = await embedAuthorization(fixture('a.pcm16.wav'), 'audio/wav', { check_id: entry.check_id, receipt }, signer);
    const verified = await verifyFile(signed, 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect(verified.authorization).toMatchObject({ license_terms_sha256: terms, receipt_verified: true, approved: true });
    expect((await readCredentials(signed, 'audio/wav', { trustAnchors: ca.pem }))?.authorization).toMatchObject({
      assertion: { license_terms_sha256: terms },
    });

    for (const claimed of [
      { ...assertion, license_terms_sha256: 'b'.repeat(64) },
      { ...assertion, license_terms_sha256: undefined },
    ]) {
      const forged = await verifyFile(await signedWithAssertion(claimed), 'audio/wav', { verifierKey, trustAnchors: ca.pem });
      expect(forged.verdict).toBe('receipt_invalid');
      expect(forged.authorization.problems.join()).toMatch(/differs from the assertion in license_terms_sha256/);
    }
  });

  it('judges a receipt of a decision that blocked `not_approved`', async () => {
    const { receipt, entry, verifierKey } = await testApprovalReceipt({ decision: 'deny', action: 'authorization_denied' });
    const assertion: AuthorizationAssertion = {
      check_id: entry.check_id,
      voice_id: entry.voice_id as string,
      platform_name: entry.platform_name as string,
      intended_use: 'audiobook',
      decided_at: entry.decided_at,
      log_origin: 'vip.test/audit',
      receipt,
    };
    const result = await verifyFile(await signedWithAssertion(assertion), 'audio/wav', { verifierKey, trustAnchors: ca.pem });
    expect(result.verdict).toBe('not_approved');
    expect(result.authorization).toMatchObject({ receipt_verified: true, approved: false });
  });

  it('compares the receipt’s checkpoint with a saved one: newer, older, or a fork of the same size (`receipt_invalid`)', async () => {
    const { receipt, entry, verifierKey, signCheckpoint } = await testApprovalReceipt();
    const signed = await embedAuthorization(fixture('a.pcm16.wav'), 'audio/wav', { check_id: entry.check_id, receipt }, signer);
    const judge = (checkpoint: string) => verifyFile(signed, 'audio/wav', { verifierKey, checkpoint, trustAnchors: ca.pem });
    const root = () => crypto.getRandomValues(new Uint8Array(32));

    const older = await judge(signCheckpoint(0, root()));
    expect([older.verdict, older.authorization.checkpoint]).toEqual(['authorized', { size: 1, relation: 'newer' }]);
    const newer = await judge(signCheckpoint(5, root()));
    expect([newer.verdict, newer.authorization.checkpoint]).toEqual(['authorized', { size: 1, relation: 'older' }]);
    const forked = await judge(signCheckpoint(1, root()));
    expect(forked.verdict).toBe('receipt_invalid');
    expect(forked.authorization).toMatchObject({ receipt_verified: false, checkpoint: { size: 1, relation: 'forked' } });
    // A saved checkpoint the key did not sign is the caller's mistake, not a verdict on the file.
    await expect(judge((await testApprovalReceipt()).checkpoint)).rejects.toThrow(TlogFormatError);
  });
});
