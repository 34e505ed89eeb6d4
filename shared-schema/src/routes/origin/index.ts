/**
 * Every file of the origin's route contracts, each named for the origin folder that serves its routes
 * (origin/src/<domain>/, registry's sub-folders under registry/). The contract test reads every
 * route from here; the architecture test holds that each file in this folder is listed.
 */
export * as audit from './audit.js';
export * as auth from './auth.js';
export * as biometricConsent from './biometric-consent.js';
export * as detection from './detection.js';
export * as health from './health.js';
export * as http from './http.js';
export * as licenseRequests from './license-requests.js';
export * as platforms from './platforms.js';
export * as provenance from './provenance.js';
export * as licenses from './registry/licenses.js';
export * as licensingPage from './registry/licensing-page.js';
export * as synthesisConsent from './registry/synthesis-consent.js';
export * as screening from './screening.js';
export * as spokenConsent from './spoken-consent.js';
export * as voices from './voices.js';
export * as webhooks from './webhooks.js';
