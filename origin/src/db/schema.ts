/** Tables of every domain, one file each under schema/, so domains can be added without touching the others. */
export * from './schema/audit.js';
export * from './schema/audit-pending.js';
export * from './schema/audit-tlog.js';
export * from './schema/auth.js';
export * from './schema/biometric-consents.js';
export * from './schema/edge-outbox.js';
export * from './schema/embeddings.js';
export * from './schema/events.js';
export * from './schema/license-requests.js';
export * from './schema/licenses.js';
export * from './schema/platforms.js';
export * from './schema/rate-limits.js';
export * from './schema/signing-certificates.js';
export * from './schema/spoken-consent.js';
export * from './schema/voices.js';
export * from './schema/watermarks.js';
export * from './schema/webhooks.js';
