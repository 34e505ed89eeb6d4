import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { embedAuthorization } from '../client/provenance.js';
import { storeOfWav } from '../testing/hostile-files.js';
import { testCertificateAuthority, testLeafCertificate } from '../testing/provenance-ca.js';
import { CREDENTIAL_FORMATS, editText } from '../testing/provenance-files.js';
import { testApprovalReceipt } from '../testing/provenance-receipt.js';
import { readManifestStore } from './c2pa.js';
import { readCredentials } from './credentials.js';
import { certificateFingerprint, signerCertificate } from './signer.js';

const fixture = (name: string) => new Uint8Array(readFileSync(new URL(`../../../fixtures/audio/${name}`, import.meta.url)));
const ca = testCertificateAuthority('Leaf Test CA', 'Leaf Test');
const leaf = testLeafCertificate({ commonName: 'Leaf Test signer', organization: 'Leaf Test', issuer: ca });
const activeLabel = async (signed: Uint8Array, mime: string) =>
  ((await readManifestStore(signed, mime)) as { active_manifest: string }).active_manifest;

describe('the test certificate authority', () => {
  it('writes serial numbers as DER wants them, whatever random bytes they start with', () => {
    // 00 then a byte below 0x80: kept as drawn, OpenSSL refused the certificate ("illegal padding").
    for (const serial of [Uint8Array.of(0, 0x12, 0x34), Uint8Array.of(0, 0, 0x9a), Uint8Array.of(0x9a, 1)]) {
      const issued = testLeafCertificate({ commonName: 'Serial Test signer', issuer: ca, serial });
      const minimal = Buffer.from(serial.subarray(serial.findIndex((byte) => byte !== 0)));
      expect(new X509Certificate(issued.pem).serialNumber).toBe(minimal.toString('hex').toUpperCase());
    }
  });
});

describe('the signer certificate of a manifest (c2pa.signature, COSE x5chain)', { timeout: 60_000 }, () => {
  it.each(CREDENTIAL_FORMATS)('reads the leaf that signed a $name file, and a registered leaf makes it trusted', async ({ file, mime }) => {
    const { receipt, entry } = await testApprovalReceipt();
    const signed = await embedAuthorization(
      fixture(file),
      mime,
      { check_id: entry.check_id, receipt },
      {
        certificateChain: [leaf.pem, ca.pem],
        privateKey: leaf.privateKey,
      },
    );
    const signer = signerCertificate(signed, await activeLabel(signed, mime));
    expect(signer?.der).toEqual(new Uint8Array(leaf.der));
    expect(signer?.fingerprint_sha256).toBe(certificateFingerprint(leaf.der));
    expect(signerCertificate(signed, 'urn:c2pa:not-this-one')).toBeNull();

    const trusted = await readCredentials(signed, mime, { trustAnchors: leaf.pem });
    expect(trusted).toMatchObject({ state: 'trusted', trusted_as_leaf: true, failure_codes: [] });
    const sibling = testLeafCertificate({ commonName: 'Leaf Test signer', organization: 'Leaf Test', issuer: ca });
    expect(await readCredentials(signed, mime, { trustAnchors: sibling.pem })).toMatchObject({
      state: 'valid_untrusted',
      trusted_as_leaf: false,
    });
    // Through the CA, c2pa-rs trusts the chain itself.
    expect(await readCredentials(signed, mime, { trustAnchors: ca.pem })).toMatchObject({ state: 'trusted', trusted_as_leaf: false });
  });

  it('believes no leaf that does not verify the claim it signed, and none in a file with two manifest stores', async () => {
    const { receipt, entry } = await testApprovalReceipt();
    const signed = await embedAuthorization(
      fixture('a.pcm16.wav'),
      'audio/wav',
      { check_id: entry.check_id, receipt },
      {
        certificateChain: [leaf.pem, ca.pem],
        privateKey: leaf.privateKey,
      },
    );
    expect(signerCertificate(signed, await activeLabel(signed, 'audio/wav'))).not.toBeNull();
    // The claim (its generator's name) edited: the leaf no longer verifies the claim signature.
    const edited = editText(signed, 'vip-client', 'vip-clienT');
    expect(signerCertificate(edited, await activeLabel(signed, 'audio/wav'))).toBeNull();
    expect(await readCredentials(edited, 'audio/wav', { trustAnchors: leaf.pem })).toMatchObject({ trusted_as_leaf: false });

    const twice = Uint8Array.from([...signed, ...storeOfWav(signed)]);
    expect(signerCertificate(twice, await activeLabel(signed, 'audio/wav'))).toBeNull();
  });
});
