/**
 * What other domains use of the registry: the voice as its owner may change it, publishing a
 * voice's state to the edge index in the transaction of a change, and the licences it holds.
 */
export { acceptableExpiry, type LicenseService, statedTerms, type TermsOfLicense } from './licenses/service.js';
export { countLicensesOfVoice, holdsLiveLicense } from './licenses/store.js';
export { termsSha256Of } from './licenses/terms.js';
export { findVoiceFor, lockVoiceFor, refuseWhileHeld } from './voice-index/access.js';
export type { RegistryActor } from './voice-index/audit.js';
export { publishVoiceIndex, republishVoiceIndex } from './voice-index/publish.js';
