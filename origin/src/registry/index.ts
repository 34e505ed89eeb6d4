/**
 * What other domains use of the registry: the voice as its owner may change it, publishing a
 * voice's state to the edge index in the transaction of a change, and the licences it holds.
 */

export { findVoiceFor, lockVoiceFor, refuseWhileHeld } from './edge-index/access.js';
export type { RegistryActor } from './edge-index/audit.js';
export { publishToEdgeIndex, republishVoicesToEdgeIndex } from './edge-index/publish.js';
export { acceptableExpiry, type LicenseService, statedTerms, type TermsOfLicense } from './licenses/service.js';
export { countLicensesOfVoice, holdsLiveLicense } from './licenses/store.js';
export { termsSha256Of } from './licenses/terms.js';
