import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { BIOMETRIC_CONSENT_STATEMENT, pathOf } from '@vip/shared-schema';
import { loginRoute } from '@vip/shared-schema/routes/origin/auth';
import { grantBiometricConsentRoute } from '@vip/shared-schema/routes/origin/biometric-consent';
import { spokenConsentRecordingRoute } from '@vip/shared-schema/routes/origin/spoken-consent';
import { enrollVoiceRoute, listVoicesRoute } from '@vip/shared-schema/routes/origin/voices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { curlOf, type DemoSeed, SeedRefused, seedDemo } from '../../launch/demo-seed.js';
import { DEFAULT_ADMIN_EMAIL } from '../../origin/src/config.js';
import { eventually, json, type RunningService, startService } from '../support/service.js';
import { OTHER_SPEAKER_CLIPS } from '../support/speech.js';

describe('the seeded demo: `npm start -- --demo` and `npm run seed`', () => {
  let service: RunningService;
  let seed: DemoSeed;
  const seedAgain = () =>
    seedDemo({ originUrl: service.originUrl, edgeUrl: service.edgeUrl, dataDir: service.dataDir, admin: { email: DEFAULT_ADMIN_EMAIL } });

  beforeAll(async () => {
    // No ADMIN_EMAIL / ADMIN_PASSWORD: --demo gives the new admin a password kept in DATA_DIR/demo.json.
    // No SPOKEN_CONSENT: the default, which requires one. (Empty means unset, whatever the environment
    // running the tests holds.)
    service = await startService({ args: ['--demo'], env: { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', SPOKEN_CONSENT: '' } });
    await eventually(
      async () => service.output().includes('[start] demo seeded') || service.output().includes('demo seed failed'),
      120_000,
    );
    expect(service.output()).not.toContain('demo seed failed');
    seed = await seedAgain();
  }, 240_000);
  afterAll(async () => {
    await service?.stop();
  });

  it('is idempotent: a second run finds the same platform, key and voice', async () => {
    expect(service.output()).toContain(seed.voiceId);
    expect(service.output()).toContain(seed.apiKey);
    const again = await seedAgain();
    expect(again).toMatchObject({ voiceId: seed.voiceId, apiKey: seed.apiKey, platformName: seed.platformName });
    const state = JSON.parse(readFileSync(join(service.dataDir, 'demo.json'), 'utf8'));
    expect(Object.keys(state).sort()).toEqual(['admin_password', 'api_key', 'api_key_id', 'owner_email', 'owner_password']);
    // The owner's sign-in, as kept, opens the console's account.
    const ownerLogin = await fetch(`${service.originUrl}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: state.owner_email, password: state.owner_password }),
    });
    expect(ownerLogin.status).toBe(200);
    expect(service.output()).toContain(`sign in as ${state.owner_email} with the owner_password in demo.json`);
  });

  it('enrolls the demo voice with a spoken consent, as the default requires of every enrollment', async () => {
    const state = JSON.parse(readFileSync(join(service.dataDir, 'demo.json'), 'utf8'));
    const login = await json(
      await fetch(`${service.originUrl}${pathOf(loginRoute)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: state.owner_email, password: state.owner_password }),
      }),
    );
    const owner = { authorization: `Bearer ${login.access_token as string}` };
    // The consent recording the seed sent is kept with the voice, for its owner alone.
    const recording = await fetch(`${service.originUrl}${pathOf(spokenConsentRecordingRoute, { voice_id: seed.voiceId })}`, {
      headers: owner,
    });
    expect(recording.status).toBe(200);
    expect((await recording.arrayBuffer()).byteLength).toBeGreaterThan(44);
    // An enrollment without one is refused, naming what is missing, and nothing is stored.
    const consent = await json(
      await fetch(`${service.originUrl}${pathOf(grantBiometricConsentRoute)}`, {
        method: 'POST',
        headers: { ...owner, 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'biometric', statement_version: BIOMETRIC_CONSENT_STATEMENT.version, accepted: true }),
      }),
    );
    const form = new FormData();
    form.set('name', 'Unspoken');
    form.set('consent_id', consent.consent_id as string);
    for (const path of OTHER_SPEAKER_CLIPS) form.append('audio', new Blob([readFileSync(path)]), basename(path));
    const refused = await fetch(`${service.originUrl}${pathOf(enrollVoiceRoute)}`, { method: 'POST', headers: owner, body: form });
    expect(refused.status).toBe(422);
    const problem = await json(refused);
    expect(problem.code).toBe('validation_failed');
    expect((problem.errors as { field: string }[]).map((error) => error.field)).toEqual(['body.spoken_consent', 'body.challenge_id']);
    const voices = await json(await fetch(`${service.originUrl}${pathOf(listVoicesRoute)}`, { headers: owner }));
    expect((voices.voices as { voice_id: string }[]).map((voice) => voice.voice_id)).toEqual([seed.voiceId]);
  });

  it('prints a command per outcome, and each request reaches it', async () => {
    const send = (outcome: string, token?: string) => {
      const request = seed.requests.find((candidate) => candidate.outcome === outcome)!;
      expect(service.output()).toContain(curlOf(request));
      const body = token ? { token } : request.body;
      return fetch(request.url, { method: 'POST', headers: request.headers, body: JSON.stringify(body) });
    };
    const approved = await json(await send('approved'));
    expect(approved).toMatchObject({ status: 'approved', voice_id: seed.voiceId });
    expect(await json(await send('blocked'))).toMatchObject({ status: 'blocked', reason: 'scope_mismatch' });
    expect(await json(await send('no_registry_record'))).toMatchObject({ action: 'no_registry_record', voice_id: null });
    const redeemed = await send('redeemed', approved.authorization_token as string);
    expect(redeemed.status).toBe(200);
    expect(await json(redeemed)).toMatchObject({ voice_id: seed.voiceId, intended_use: 'audiobook' });
    expect((await send('redeemed', approved.authorization_token as string)).status).toBe(409);
  });

  it('refuses a service or a database that is not on this machine unless told', async () => {
    const local = {
      originUrl: service.originUrl,
      edgeUrl: service.edgeUrl,
      dataDir: service.dataDir,
      admin: { email: DEFAULT_ADMIN_EMAIL },
    };
    await expect(seedDemo({ ...local, originUrl: 'https://origin.example.com' })).rejects.toThrow(SeedRefused);
    await expect(seedDemo({ ...local, databaseUrl: 'postgresql://demo@db.example.com/vip' })).rejects.toThrow(
      /db\.example\.com.*--allow-remote/,
    );
    // Told: the local service is seeded even though the database URL names another host.
    await expect(seedDemo({ ...local, databaseUrl: 'postgresql://demo@db.example.com/vip', allowRemote: true })).resolves.toMatchObject({
      voiceId: seed.voiceId,
    });
  });
});

describe('`npm start -- --demo` on a data folder a plain `npm start` made', () => {
  let service: RunningService | undefined;
  afterAll(async () => {
    await service?.stop();
  });

  it('seeds the demo as the admin the plain start created, whose printed password still signs in', async () => {
    const unset = { ADMIN_EMAIL: '', ADMIN_PASSWORD: '', SPOKEN_CONSENT: '' };
    const plain = await startService({ env: unset });
    await plain.stop();
    const printed = /VIP ADMIN ACCOUNT CREATED: (\S+) password: (\S+)/.exec(plain.output());
    expect(printed?.[1]).toBe(DEFAULT_ADMIN_EMAIL);

    service = await startService({ args: ['--demo'], dataDir: plain.dataDir, env: unset });
    const running = service;
    await eventually(
      async () => running.output().includes('[start] demo seeded') || running.output().includes('demo seed failed'),
      120_000,
    );
    expect(running.output()).not.toContain('demo seed failed');
    expect(running.output()).toContain(`the existing admin ${DEFAULT_ADMIN_EMAIL} signed in with the service's key`);
    // No second password is made up for an admin that has one: demo.json keeps the demo's own credentials only.
    expect(Object.keys(JSON.parse(readFileSync(join(running.dataDir, 'demo.json'), 'utf8'))).sort()).toEqual([
      'api_key',
      'api_key_id',
      'owner_email',
      'owner_password',
    ]);
    const seed = await seedDemo({
      originUrl: running.originUrl,
      edgeUrl: running.edgeUrl,
      dataDir: running.dataDir,
      admin: { email: DEFAULT_ADMIN_EMAIL, password: printed![2]! },
    });
    expect(running.output()).toContain(seed.voiceId);
    const approved = seed.requests.find((request) => request.outcome === 'approved')!;
    const answer = await json(
      await fetch(approved.url, { method: 'POST', headers: approved.headers, body: JSON.stringify(approved.body) }),
    );
    expect(answer).toMatchObject({ status: 'approved', voice_id: seed.voiceId });
  }, 360_000);

  it('`npm run seed` without the password says what to run', async () => {
    const running = service!;
    await expect(
      seedDemo({ originUrl: running.originUrl, edgeUrl: running.edgeUrl, dataDir: running.dataDir, admin: { email: DEFAULT_ADMIN_EMAIL } }),
    ).rejects.toThrow(/no admin password for admin@vip\.local: set ADMIN_PASSWORD .* `npm start -- --demo`/);
  });
});
