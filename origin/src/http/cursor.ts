import { ProblemError } from '@vip/shared-schema';
import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/** A list position: the last row of the previous page, newest-first lists ordered by (created_at, id). */
export interface ListPosition {
  createdAt: Date;
  id: string;
}

export const encodeCursor = (row: ListPosition): string => Buffer.from(`${row.createdAt.toISOString()}|${row.id}`).toString('base64url');

export function decodeCursor(cursor: string): ListPosition {
  const [time, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(time ?? '');
  if (Number.isNaN(createdAt.getTime()) || !id || !/^[0-9a-f-]{36}$/.test(id)) {
    throw new ProblemError('validation_failed', 'The request query is invalid.', {
      errors: [{ field: 'query.cursor', message: 'not a cursor this API issued' }],
    });
  }
  return { createdAt, id };
}

/** The rows after `after` in a newest-first list ordered by (created_at, id); no condition on the first page. */
export function olderThan(createdAt: PgColumn, id: PgColumn, after: ListPosition | null): SQL | undefined {
  return after ? sql`(${createdAt}, ${id}) < (${after.createdAt.toISOString()}::timestamptz, ${after.id}::uuid)` : undefined;
}
