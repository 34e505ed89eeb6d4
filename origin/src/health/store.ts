import { sql } from 'drizzle-orm';
import type { Database } from '../db/client.js';

/** The cheapest round trip that proves the database takes queries. */
export async function selectOne(db: Database): Promise<void> {
  await db.execute(sql`select 1`);
}
