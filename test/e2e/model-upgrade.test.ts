import { readFile } from 'node:fs/promises';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  enrolledVoice,
  eventually,
  issuePlatformKey,
  json,
  post,
  type RunningService,
  registeredOwner,
  startService,
} from '../support/service.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';

/*
 * A deployment that ran vip-speaker-v1 and upgrades to the default model (docs/OPERATIONS.md,
 * "Upgrading the speaker model"): the same data folder, started first with the earlier model pinned,
 * then as `npm start` starts it. The voices enrolled under v1 keep their consent, licences and gate
 * answers; their voiceprints are never compared with the new model's embeddings, and a re-enrollment
 * brings them onto it.
 */
const admin = { email: 'admin@model-upgrade.example', password: 'model-upgrade-admin-password' };
const owner = { email: 'owner@model-upgrade.example', password: 'model-upgrade-owner-password' };
const platformName = 'Model Upgrade Platform';
const EARLIER_MODEL = 'vip-speaker-v1';

const clips = (paths: readonly string[]) => Promise.all(paths.map(async (path) => new Uint8Array(await readFile(path))));

function audioForm(field: string, files: Uint8Array[], fields: Record<string, string> = {}): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.set(name, value);
  for (const [index, file] of files.entries())
    form.append(field, new Blob([Uint8Array.from(file)], { type: 'audio/ogg' }), `clip-${index}.opus`);
  return form;
}

describe('an origin holding vip-speaker-v1 voices, started on the default model', () => {
  let service: RunningService;
  let ownerToken: string;
  let apiKey: string;
  let voiceId: string;
  const env = { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password };
  const asOwner = () => ({ authorization: `Bearer ${ownerToken}` });
  const gate = async () =>
    json(
      await post(
        `${service.edgeUrl}${edgeRoutes.preSynthesisCheck.path}`,
        { voice_id: voiceId, platform_name: platformName, intended_use: 'audiobook' },
        { 'x-api-key': apiKey },
      ),
    );
  const listedVoice = async () => {
    const list = await json(await fetch(`${service.originUrl}/api/v1/voices`, { headers: asOwner() }));
    return (list.voices as Array<Record<string, unknown>>).find((voice) => voice.voice_id === voiceId)!;
  };
  const compare = async (files: Uint8Array[]) =>
    fetch(`${service.originUrl}/api/v1/detection/compare`, {
      method: 'POST',
      headers: asOwner(),
      body: audioForm('audio1', files.slice(0, 1), { voice_id: voiceId }),
    });

  beforeAll(async () => {
    service = await startService({ env: { ...env, VOICEPRINT_MODEL: EARLIER_MODEL } });
    apiKey = await issuePlatformKey(service.originUrl, admin, platformName);
    ownerToken = await registeredOwner(service.originUrl, owner);
    voiceId = await enrolledVoice(service.originUrl, ownerToken, 'Upgraded Voice', await clips(ENROLL_CLIPS));
    const consent = await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/consent`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...asOwner() },
      body: JSON.stringify({ status: 'active' }),
    });
    expect(consent.status).toBe(200);
    const expires_at = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const licence = await post(
      `${service.originUrl}/api/v1/voices/${voiceId}/licenses`,
      { platform_name: platformName, scopes: ['audiobook'], description: 'Narration of audiobook chapters for the tests', expires_at },
      asOwner(),
    );
    expect(licence.status).toBe(201);
    await eventually(async () => (await gate()).status === 'approved', 10_000);
    expect(await listedVoice()).toMatchObject({ model: EARLIER_MODEL, voiceprint_current: true });

    const dataDir = service.dataDir;
    expect(await service.stop()).toBe(0);
    service = await startService({ dataDir, env });
    ownerToken = (await json(await post(`${service.originUrl}/api/v1/auth/login`, owner))).access_token as string;
  }, 360_000);

  afterAll(async () => {
    await service?.stop();
  });

  it('runs the default model, lists the v1 voice as not current, and keeps its gate answers', async () => {
    expect(service.output()).not.toContain(`"model":"${EARLIER_MODEL}"`);
    expect(await listedVoice()).toMatchObject({ model: EARLIER_MODEL, voiceprint_current: false });
    expect(await gate()).toMatchObject({ status: 'approved', voice_id: voiceId });
  });

  it('never compares a recording with the v1 voiceprint, and re-enrollment brings the voice onto the new model', async () => {
    const same = await clips(ENROLL_CLIPS);
    const before = await compare(same);
    expect(before.status).toBe(422);
    expect(await json(before)).toMatchObject({ code: 'model_mismatch' });

    const reenrolled = await fetch(`${service.originUrl}/api/v1/voices/${voiceId}/re-enroll`, {
      method: 'POST',
      headers: asOwner(),
      body: audioForm('audio', same),
    });
    expect(reenrolled.status, await reenrolled.clone().text()).toBe(200);
    const current = await listedVoice();
    expect(current.voiceprint_current).toBe(true);
    expect(current.model).not.toBe(EARLIER_MODEL);

    const own = await json(await compare(same));
    const other = await json(await compare(await clips(OTHER_SPEAKER_CLIPS)));
    expect(own).toMatchObject({ is_same_speaker: true });
    expect(other).toMatchObject({ is_same_speaker: false });
    expect(await gate()).toMatchObject({ status: 'approved', voice_id: voiceId });
  });
});
