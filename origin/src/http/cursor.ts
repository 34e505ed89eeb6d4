import { ProblemError } from '@vip/shared-schema';
import { type SQL, sql } from 'drizzle-orm';
import type { PgColumn } from 'drizzle-orm/pg-core';

/** A position in a list ordered by (time, id): the last row of the previous page. */
export interface TimeCursor {
  at: Date;
  id: string;
}

/** Opaque to clients: base64url of the row's time and id. */
export const encodeCursor = (position: TimeCursor): string =>
  Buffer.from(`${position.at.toISOString()}|${position.id}`).toString('base64url');

export function decodeCursor(cursor: string): TimeCursor {
  const [time, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
  const at = new Date(time ?? '');
  if (Number.isNaN(at.getTime()) || !id || !/^[0-9a-f-]{36}$/.test(id)) {
    throw new ProblemError('validation_failed', 'The request query is invalid.', {
      errors: [{ field: 'query.cursor', message: 'not a cursor this API issued' }],
    });
  }
  return { at, id };
}

/** The rows after `after` in a newest-first list ordered by (time, id); no condition on the first page. */
export function olderThan(time: PgColumn, id: PgColumn, after: TimeCursor | null): SQL | undefined {
  return after ? sql`(${time}, ${id}) < (${after.at.toISOString()}::timestamptz, ${after.id}::uuid)` : undefined;
}
