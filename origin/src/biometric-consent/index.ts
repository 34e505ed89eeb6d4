/** What other domains use of the biometric consents: the consent an enrollment needs, attached to its voice and erased with it. */
export { consentRequired, isUnusedConsentOf, usableConsent } from './service.js';
export { attachConsentToVoice, deleteConsentsOfVoice, findConsent, lockConsent, recordSpokenEvidence } from './store.js';
