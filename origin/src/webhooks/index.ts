/** What other domains use of the webhooks: sealing a licence token into an event with the secrets' encryption. */
export { sealLicenseToken } from './sealed-fields.js';
export type { SecretEncryption } from './secret-encryption.js';
