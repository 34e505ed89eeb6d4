import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readCredentials } from '../provenance/credentials.js';
import { testCertificateAuthority, testLeafCertificate } from '../provenance/test-ca.js';
import { testApprovalReceipt } from '../provenance/test-receipt.js';
import { AUTHORIZATION_ASSERTION_LABEL, authorizationAssertionBytes, type ProvenanceMimeType } from '../provenance.js';
import { TlogFormatError } from '../tlog.js';
import { authorizationAssertionOf, embedAuthorization } from './provenance.js';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../../fixtures/audio/${name}`, import.meta.url)));
const FORMATS: [string, ProvenanceMimeType][] = [
  ['a.pcm16.wav', 'audio/wav'],
  ['a.mp3', 'audio/mpeg'],
  ['a.m4a', 'audio/mp4'],
];

const ca = testCertificateAuthority('Acme TTS Content Credentials CA', 'Acme TTS');
const leaf = testLeafCertificate({ commonName: 'Acme TTS signer', organization: 'Acme TTS', issuer: ca });
const signer = { certificateChain: [leaf.pem, ca.pem], privateKey: leaf.privateKey };

describe('embedAuthorization', () => {
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
