import { index, pgTable, text, timestamp, uuid } from 'drizzle-orm/pg-core';

export const platforms = pgTable('platforms', {
  id: uuid('id').primaryKey(),
  name: text('name').notNull().unique(),
  createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
});

export type PlatformRow = typeof platforms.$inferSelect;

export const apiKeys = pgTable(
  'api_keys',
  {
    id: uuid('id').primaryKey(),
    platformId: uuid('platform_id')
      .notNull()
      .references(() => platforms.id, { onDelete: 'cascade' }),
    /** SHA-256 hex of the whole key; the key itself is never stored. */
    keyHash: text('key_hash').notNull().unique(),
    /** The first characters after `vip_`, so an admin can recognise a key in a list. */
    prefix: text('prefix').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true }),
  },
  (table) => [index('api_keys_platform_idx').on(table.platformId)],
);

export type ApiKeyRow = typeof apiKeys.$inferSelect;
