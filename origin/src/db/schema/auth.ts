import { sql } from 'drizzle-orm';
import { bigserial, index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const users = pgTable('users', {
  id: uuid('id').primaryKey(),
  /** Stored lower-case; the API lower-cases before every lookup. */
  email: text('email').notNull().unique(),
  /** scrypt with a per-user salt; the encoding carries its own parameters (auth/passwords.ts). */
  passwordHash: text('password_hash').notNull(),
  role: text('role', { enum: ['owner', 'admin'] }).notNull(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});

export type UserRow = typeof users.$inferSelect;

export const refreshTokens = pgTable(
  'refresh_tokens',
  {
    id: uuid('id').primaryKey(),
    /** Every token issued by rotation from one login shares the family; reuse revokes the family. */
    familyId: uuid('family_id').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenHash: text('token_hash').notNull().unique(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true }).notNull(),
    usedAt: timestamp('used_at', { withTimezone: true }),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (table) => [index('refresh_tokens_family_idx').on(table.familyId)],
);

export type RefreshTokenRow = typeof refreshTokens.$inferSelect;

/**
 * Failed logins, one row each, keyed by `account:<email>` and `ip:<address>`. Kept in the database
 * so that every origin replica counts the same attempts.
 */
export const loginFailures = pgTable(
  'login_failures',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    subject: text('subject').notNull(),
    failedAt: timestamp('failed_at', { withTimezone: true }).notNull().default(sql`now()`),
  },
  (table) => [
    index('login_failures_subject_idx').on(table.subject, table.failedAt),
    index('login_failures_failed_at_idx').on(table.failedAt),
  ],
);
