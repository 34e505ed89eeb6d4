import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pathOf, sha256Hex } from '@vip/shared-schema';
import { revokeApiKeyRoute } from '@vip/shared-schema/routes/origin/platforms';
import { asc, eq, gt, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { openPglite } from '../../db/client.js';
import { edgeOutbox, licenses } from '../../db/schema.js';
import { republishApiKeys } from '../../platforms/index.js';
import { createLicense, newVoice, origin, voiceRecords } from '../../testing/licenses.js';
import { bearer, loggedIn, platformWithApiKey } from '../../testing/origin.js';
import { insertTestVoice } from '../../testing/voices.js';
import { termsSha256Of } from '../licenses/terms.js';
import { republishVoicesToEdgeIndex } from './publish.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..');

const lastOutboxId = async () =>
  (await origin.database.db.select({ id: edgeOutbox.id }).from(edgeOutbox).orderBy(asc(edgeOutbox.id))).at(-1)?.id ?? 0;
const queuedAfter = (id: number) => origin.database.db.select().from(edgeOutbox).where(gt(edgeOutbox.id, id)).orderBy(asc(edgeOutbox.id));

describe('republishing the edge index (npm run edge:republish)', () => {
  it("queues every voice's current record again, each licence with the hash of its terms, under newer versions", async () => {
    const [licensed, bare] = [await newVoice(), await newVoice()];
    const licence = await createLicense(licensed);
    const [row] = await origin.database.db.select().from(licenses).where(eq(licenses.id, licence.license_id));
    const before = await voiceRecords(licensed);
    const mark = await lastOutboxId();

    const count = await republishVoicesToEdgeIndex(origin.database.db, origin.runtime.clock.now());

    const queued = (await queuedAfter(mark)).filter((update) => update.kind === 'voice');
    expect(count).toBe(queued.length);
    expect(queued.map((update) => update.entityKey)).toEqual(expect.arrayContaining([licensed, bare]));
    const after = await voiceRecords(licensed);
    expect(after).toHaveLength(before.length + 1);
    expect(after.at(-1)!.version).toBeGreaterThan(before.at(-1)!.version);
    expect(after.at(-1)!.record).toEqual({
      ...before.at(-1)!.record,
      licenses: [expect.objectContaining({ license_id: licence.license_id })],
    });
    expect(after.at(-1)!.record!.licenses[0]!.terms_sha256).toBe(await termsSha256Of(row!));
    expect((await voiceRecords(bare)).at(-1)!.record).toMatchObject({ voice_id: bare, licenses: [] });
  });

  it('queues every API key again with its platform, a revoked key as revoked', async () => {
    const admin = await loggedIn(origin, 'admin');
    const live = await platformWithApiKey(origin, admin.accessToken, 'Republish Live');
    const revoked = await platformWithApiKey(origin, admin.accessToken, 'Republish Revoked');
    const revoking = await origin.app.inject({
      method: 'DELETE',
      url: pathOf(revokeApiKeyRoute, { platform_id: revoked.platformId, key_id: revoked.key_id }),
      headers: bearer(admin.accessToken),
    });
    expect(revoking.statusCode).toBe(200);
    const mark = await lastOutboxId();

    const count = await republishApiKeys(origin.database.db, origin.runtime.clock.now());

    const queued = await queuedAfter(mark);
    expect(queued.every((update) => update.kind === 'api_key')).toBe(true);
    expect(count).toBe(queued.length);
    const byHash = new Map(queued.map((update) => [update.entityKey, (update.payload as { record: unknown }).record]));
    expect(byHash.get(await sha256Hex(live.api_key))).toEqual({
      key_id: live.key_id,
      platform_id: live.platformId,
      platform_name: 'Republish Live',
      revoked: false,
    });
    expect(byHash.get(await sha256Hex(revoked.api_key))).toMatchObject({ key_id: revoked.key_id, revoked: true });
  });
});

describe('the command', () => {
  it('queues the records of the configured database and says how many', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'vip-republish-'));
    try {
      const handle = await openPglite(join(dataDir, 'pglite'));
      await handle.migrate();
      const ownerId = randomUUID();
      await handle.db.execute(sql`insert into users (id, email, password_hash, role, created_at)
        values (${ownerId}, 'republish@example.test', 'x', 'owner', now())`);
      const voiceId = await insertTestVoice(handle.db, ownerId, { consentStatus: 'active' });
      await handle.close();

      const { stdout } = await promisify(execFile)('npm', ['run', '--silent', 'edge:republish'], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '' },
      });
      expect(stdout).toContain('queued for the edge index: 1 voices, 0 API keys');

      const reopened = await openPglite(join(dataDir, 'pglite'));
      const rows = await reopened.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId));
      await reopened.close();
      expect(rows.map((row) => (row.payload as { record: { consent_status: string } }).record.consent_status)).toEqual(['active']);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
