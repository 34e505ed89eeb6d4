/** What other domains use of the spoken consent: the enrollment checks a spoken consent through it. */
export type { SpokenConsentService, VerifiedConsent } from './service.js';
