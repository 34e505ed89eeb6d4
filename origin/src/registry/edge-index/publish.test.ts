import { createdLicenseSchema, pathOf, type VoiceIndexRecord } from '@vip/shared-schema';
import { createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import { createLicenseRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { setSynthesisConsentRoute } from '@vip/shared-schema/routes/origin/registry/synthesis-consent';
import { asc, eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { edgeOutbox, voices } from '../../db/schema.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from '../../testing/origin.js';
import { insertTestVoice } from '../../testing/voices.js';
import { publishToEdgeIndex } from './publish.js';

let origin: TestOrigin;
let owner: Awaited<ReturnType<typeof loggedIn>>;
const platformName = 'Ordering Platform';
beforeAll(async () => {
  origin = await startTestOrigin();
  owner = await loggedIn(origin);
  const admin = await loggedIn(origin, 'admin');
  await origin.app.inject({
    method: 'POST',
    url: pathOf(createPlatformRoute),
    headers: bearer(admin.accessToken),
    payload: { name: platformName },
  });
});
afterAll(() => origin?.close());

const voiceUpdates = async (voiceId: string) => {
  const rows = await origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId)).orderBy(asc(edgeOutbox.id));
  return rows.map((row) => ({ version: row.id, record: (row.payload as { record: VoiceIndexRecord | null }).record }));
};

describe('publishToEdgeIndex', () => {
  it('publishes a deleted voice as a null record', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    await origin.database.db.transaction(async (tx) => {
      await tx.delete(voices).where(eq(voices.id, voiceId));
      await publishToEdgeIndex(tx, voiceId, origin.runtime.clock.now());
    });
    expect(await origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId))).toEqual([
      expect.objectContaining({ kind: 'voice', payload: { kind: 'voice', voice_id: voiceId, record: null } }),
    ]);
  });

  it('gives the update that commits last the highest version, under concurrent changes', async () => {
    const voiceId = await insertTestVoice(origin.database.db, owner.userId);
    const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
    const createOne = (use: string) =>
      origin.app.inject({
        method: 'POST',
        url: pathOf(createLicenseRoute, { voice_id: voiceId }),
        headers: bearer(owner.accessToken),
        payload: {
          platform_name: platformName,
          scopes: [use],
          description: 'Narration of audiobook chapters for the tests',
          expires_at: expiresAt,
        },
      });
    const consent = (status: string) =>
      origin.app.inject({
        method: 'PUT',
        url: pathOf(setSynthesisConsentRoute, { voice_id: voiceId }),
        headers: bearer(owner.accessToken),
        payload: { status },
      });
    const responses = await Promise.all([
      createOne('audiobook'),
      consent('active'),
      createOne('podcast'),
      createOne('music'),
      consent('withdrawn'),
      createOne('gaming'),
    ]);
    expect(responses.map((response) => response.statusCode)).toEqual([201, 200, 201, 201, 200, 201]);

    const updates = await voiceUpdates(voiceId);
    expect(updates).toHaveLength(6);
    // Written in commit order, no update can hold fewer licences than the one before it.
    const counts = updates.map((update) => update.record!.licenses.length);
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(new Set(updates.map((update) => update.version)).size).toBe(updates.length);
    const latest = updates.at(-1)!.record!;
    const created = responses
      .filter((response) => response.statusCode === 201)
      .map((response) => createdLicenseSchema.parse(response.json()).license_id);
    expect(latest.licenses.map((licence) => licence.license_id).sort()).toEqual(created.sort());
    const [voice] = await origin.database.db.select().from(voices).where(eq(voices.id, voiceId));
    expect(latest.consent_status).toBe(voice!.consentStatus);
  });
});
