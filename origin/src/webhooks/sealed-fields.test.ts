import { describe, expect, it } from 'vitest';
import { openSealedBody, sealLicenseToken } from './sealed-fields.js';
import { SecretDecryptionError, SecretEncryption } from './secret-encryption.js';

const encryption = new SecretEncryption([{ id: 'k1', key: Buffer.alloc(32, 9) }]);
const REQUEST_ID = '6f1c2a9e-2b0e-4c37-9a51-3f7c1f0d8a11';

describe('sealed licence tokens in webhook bodies', () => {
  it('keeps the token out of the stored body and opens it, in place, to send', () => {
    const sealed = sealLicenseToken(encryption, 'vlt_secret', REQUEST_ID);
    const stored = JSON.stringify({ event: 'license.granted', request_id: REQUEST_ID, license_token: sealed, scopes: ['audiobook'] });
    expect(stored).not.toContain('vlt_secret');
    expect(openSealedBody(encryption, stored)).toBe(
      JSON.stringify({ event: 'license.granted', request_id: REQUEST_ID, license_token: 'vlt_secret', scopes: ['audiobook'] }),
    );
  });

  it('leaves a body with nothing sealed byte for byte as it was', () => {
    const body = '{"event":"license.revoked","voice_id":null,"license_token":"not sealed"}';
    expect(openSealedBody(encryption, body)).toBe(body);
  });

  it('refuses a token moved to another request, or sealed under a key it no longer has', () => {
    const sealed = sealLicenseToken(encryption, 'vlt_secret', REQUEST_ID);
    const moved = JSON.stringify({ event: 'license.granted', request_id: 'another', license_token: sealed });
    expect(() => openSealedBody(encryption, moved)).toThrow(SecretDecryptionError);
    const otherKey = new SecretEncryption([{ id: 'k2', key: Buffer.alloc(32, 1) }]);
    const body = JSON.stringify({ event: 'license.granted', request_id: REQUEST_ID, license_token: sealed });
    expect(() => openSealedBody(otherKey, body)).toThrow(SecretDecryptionError);
  });
});
