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

/** The position a page continues from: none (the first page) without a cursor. */
export function decodeCursor(cursor: string | undefined): TimeCursor | null {
  if (cursor === undefined) return null;
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

/**
 * One page of a keyset list: `read` is asked for one row more than `limit`, which tells whether
 * another page exists, and the next cursor names the page's last row (`cursorOf`).
 */
export async function keysetPage<Row>(
  limit: number,
  read: (rowsWanted: number) => Promise<Row[]>,
  cursorOf: (last: Row) => string,
): Promise<{ rows: Row[]; nextCursor: string | null }> {
  const rows = await read(limit + 1);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { rows: page, nextCursor: rows.length > limit && last !== undefined ? cursorOf(last) : null };
}
