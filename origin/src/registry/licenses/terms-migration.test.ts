import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalJson, sha256Hex } from '@vip/shared-schema';
import { eq, sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../db/client.js';
import { MIGRATIONS_FOLDER } from '../../db/migrations-folder.js';
import { licenseRequests, licenses } from '../../db/schema.js';
import { openTestDatabase } from '../../testing/database.js';
import { insertTestVoice } from '../../testing/voices.js';
import { termsSha256Of } from './terms.js';

/** The migration that gave licences their terms; the database is first migrated to the one before it. */
const TERMS_MIGRATION = /_license_terms$/;

let folder: string;
let handle: DatabaseHandle;
beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'vip-migrations-'));
  await cp(MIGRATIONS_FOLDER, folder, { recursive: true });
  const journalFile = join(folder, 'meta', '_journal.json');
  const journal = JSON.parse(await readFile(journalFile, 'utf8')) as { entries: { idx: number; tag: string }[] };
  const terms = journal.entries.findIndex((entry) => TERMS_MIGRATION.test(entry.tag));
  expect(terms).toBeGreaterThan(0);
  await writeFile(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, terms) }));
  handle = await openTestDatabase({ migrationsFolder: folder });
});
afterAll(async () => {
  await handle?.close();
  if (folder) await rm(folder, { recursive: true, force: true });
});

describe('migration of licences made before they had terms', () => {
  it('gives each licence and request a description written from its scopes, marked from_scopes, representation none, no compensation', async () => {
    const { db } = handle;
    const ownerId = randomUUID();
    await db.execute(sql`insert into users (id, email, password_hash, role, created_at)
      values (${ownerId}, ${`${ownerId}@example.test`}, 'x', 'owner', now())`);
    const voiceId = await insertTestVoice(db, ownerId, { consentStatus: 'active' });
    const [licenseId, requestId] = [randomUUID(), randomUUID()];
    await db.execute(sql`insert into licenses (id, voice_id, platform_name, scopes, expires_at, status, token_hash)
      values (${licenseId}, ${voiceId}, 'Narrator.io', ${sql.raw(`array['audiobook','podcast']`)}, '2027-03-01T00:00:00Z', 'active', ${randomUUID()})`);
    await db.execute(sql`insert into license_requests (id, voice_id, platform_name, scopes, expires_at, status, created_at)
      values (${requestId}, ${voiceId}, 'Narrator.io', ${sql.raw(`array['gaming']`)}, '2027-03-01T00:00:00Z', 'pending', now())`);

    await handle.migrate();

    const [licence] = await db.select().from(licenses).where(eq(licenses.id, licenseId));
    expect(licence).toMatchObject({
      description: 'Uses named by scope only: audiobook, podcast.',
      descriptionSource: 'from_scopes',
      representedBy: 'none',
      compensation: null,
    });
    const [request] = await db.select().from(licenseRequests).where(eq(licenseRequests.id, requestId));
    expect(request).toMatchObject({
      description: 'Uses named by scope only: gaming.',
      descriptionSource: 'from_scopes',
      representedBy: 'none',
    });
    // Its hash is over the terms as its answer shows them, the mark included.
    expect(await termsSha256Of(licence!)).toBe(
      await sha256Hex(
        canonicalJson({
          compensation: null,
          description: 'Uses named by scope only: audiobook, podcast.',
          description_source: 'from_scopes',
          expires_at: '2027-03-01T00:00:00.000Z',
          license_id: licenseId,
          platform_name: 'Narrator.io',
          represented_by: 'none',
          scopes: ['audiobook', 'podcast'],
          voice_id: voiceId,
        }),
      ),
    );
  });
});
