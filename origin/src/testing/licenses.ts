import { auditRecordSchema, createdLicenseSchema, pathOf, type VoiceIndexRecord } from '@vip/shared-schema';
import { createPlatformRoute } from '@vip/shared-schema/routes/origin/platforms';
import { createLicenseRoute } from '@vip/shared-schema/routes/origin/registry/licenses';
import { and, asc, eq, isNotNull, isNull, sql } from 'drizzle-orm';
import { afterAll, beforeAll, expect } from 'vitest';
import { auditPending, domainEvents, edgeOutbox } from '../db/schema.js';
import { bearer, loggedIn, startTestOrigin, type TestOrigin } from './origin.js';
import { insertTestVoice } from './voices.js';

/**
 * The licence tests' origin, one per test file: importing this module starts it (beforeAll) with an
 * owner and two registered platforms, and closes it (afterAll). The tests are split by subject, as
 * registry/licenses/licenses.test.ts (what works), validation.test.ts (what is refused) and
 * owner-scoping.test.ts (whose licences a caller reaches).
 */
export let origin: TestOrigin;
export let owner: Awaited<ReturnType<typeof loggedIn>>;
export let platformName: string;
export let otherPlatformName: string;
beforeAll(async () => {
  origin = await startTestOrigin();
  owner = await loggedIn(origin);
  const admin = await loggedIn(origin, 'admin');
  [platformName, otherPlatformName] = ['Narrator.io', 'Other Platform'];
  for (const name of [platformName, otherPlatformName]) {
    const created = await origin.app.inject({
      method: 'POST',
      url: pathOf(createPlatformRoute),
      headers: bearer(admin.accessToken),
      payload: { name },
    });
    expect(created.statusCode).toBe(201);
  }
});
afterAll(() => origin?.close());

export const DAY_MS = 24 * 60 * 60 * 1000;
export const inDays = (days: number) => new Date(origin.runtime.clock.now().getTime() + days * DAY_MS).toISOString();

export const call = (method: 'GET' | 'POST', url: string, payload?: unknown, token = owner.accessToken) =>
  origin.app.inject({ method, url, headers: bearer(token), ...(payload === undefined ? {} : { payload: payload as object }) });

export const newVoice = () => insertTestVoice(origin.database.db, owner.userId, { consentStatus: 'active' });

export async function createLicense(voiceId: string, fields: Record<string, unknown> = {}) {
  const response = await call('POST', pathOf(createLicenseRoute, { voice_id: voiceId }), {
    platform_name: platformName,
    scopes: ['audiobook', 'podcast'],
    description: 'Narration of the audiobook series "Harbour Lights" and its podcast trailers',
    expires_at: inDays(30),
    ...fields,
  });
  expect(response.statusCode).toBe(201);
  return createdLicenseSchema.parse(response.json());
}

export const voiceRecords = async (voiceId: string) => {
  const rows = await origin.database.db.select().from(edgeOutbox).where(eq(edgeOutbox.entityKey, voiceId)).orderBy(asc(edgeOutbox.id));
  return rows.map((row) => ({ version: row.id, record: (row.payload as { record: VoiceIndexRecord | null }).record }));
};
/** The owner's events of a voice (each licence change also has the platform's copy: platformEventsFor). */
export const eventsFor = (voiceId: string) =>
  origin.database.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.voiceId, voiceId), isNull(domainEvents.platformName)))
    .orderBy(asc(domainEvents.id));
export const platformEventsFor = (voiceId: string) =>
  origin.database.db
    .select()
    .from(domainEvents)
    .where(and(eq(domainEvents.voiceId, voiceId), isNotNull(domainEvents.platformName)))
    .orderBy(asc(domainEvents.id));
export const auditRecordsFor = async (voiceId: string) =>
  (await origin.database.db.select().from(auditPending).where(sql`${auditPending.record}->>'voice_id' = ${voiceId}`)).map((row) =>
    auditRecordSchema.parse(row.record),
  );
