import { integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';

/** Calls per credential in fixed windows (http/rate-limit.ts), shared by every origin process. */
export const rateLimitWindows = pgTable(
  'rate_limit_windows',
  {
    subject: text('subject').notNull(),
    windowStart: timestamp('window_start', { withTimezone: true }).notNull(),
    calls: integer('calls').notNull(),
  },
  (table) => [primaryKey({ name: 'rate_limit_windows_pk', columns: [table.subject, table.windowStart] })],
);
