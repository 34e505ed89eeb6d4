import { boolean, index, pgTable, text, timestamp, unique, uuid } from 'drizzle-orm/pg-core';
import { platforms } from './platforms.js';

/**
 * The certificates a platform signs Content Credentials with (docs/CONTRACT.md#content-credentials):
 * a file's signer must chain to one of its platform's live certificates. Public certificates only;
 * the keys stay with the platform.
 */
export const signingCertificates = pgTable(
  'signing_certificates',
  {
    id: uuid('id').primaryKey(),
    platformId: uuid('platform_id')
      .notNull()
      .references(() => platforms.id, { onDelete: 'cascade' }),
    pem: text('pem').notNull(),
    /** SHA-256 hex of the DER: one registration per certificate and platform. */
    fingerprint: text('fingerprint').notNull(),
    subject: text('subject').notNull(),
    issuer: text('issuer').notNull(),
    isCa: boolean('is_ca').notNull(),
    notBefore: timestamp('not_before', { withTimezone: true }).notNull(),
    notAfter: timestamp('not_after', { withTimezone: true }).notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (table) => [
    unique('signing_certificates_platform_fingerprint').on(table.platformId, table.fingerprint),
    index('signing_certificates_platform_idx').on(table.platformId),
  ],
);

export type SigningCertificateRow = typeof signingCertificates.$inferSelect;
