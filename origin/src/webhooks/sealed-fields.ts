import type { SecretEncryption } from './secret-encryption.js';

/**
 * A secret meant for one webhook receiver (the licence token of `license.granted`) must not lie in
 * the event and delivery tables in the clear: it is stored sealed (encrypted under
 * SECRETS_ENCRYPTION_KEYS, bound to its request) and opened only to sign and send the delivery.
 */
const SEALED_PREFIX = 'sealed:';
const SEALED_FIELD = 'license_token';

export const sealLicenseToken = (encryption: SecretEncryption, token: string, requestId: string): string =>
  SEALED_PREFIX + encryption.encrypt(token, `${SEALED_FIELD}:${requestId}`);

/** The body as the receiver gets it; a body with nothing sealed is returned as it is. Throws SecretDecryptionError. */
export function openSealedBody(encryption: SecretEncryption, body: string): string {
  if (!body.includes(`"${SEALED_PREFIX}`)) return body;
  const payload = JSON.parse(body) as Record<string, unknown>;
  const sealed = payload[SEALED_FIELD];
  if (typeof sealed !== 'string' || !sealed.startsWith(SEALED_PREFIX)) return body;
  const token = encryption.decrypt(sealed.slice(SEALED_PREFIX.length), `${SEALED_FIELD}:${String(payload.request_id)}`);
  return JSON.stringify({ ...payload, [SEALED_FIELD]: token });
}
