import { readFile } from 'node:fs/promises';
import { redeemResultSchema } from '@vip/shared-schema';
import { createOriginClient } from '@vip/shared-schema/client';
import { embedAuthorization } from '@vip/shared-schema/client/provenance';
import { storeOfWav } from '@vip/shared-schema/testing/hostile-files';
import { platformSigner } from '@vip/shared-schema/testing/provenance-files';
import { markPcm, type WatermarkGrant } from '@vip/shared-schema/watermark/index';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pcm16Wav } from '../../origin/src/testing/fixtures.js';
import { decodeAudio } from '../../origin/src/voiceprint/decode.js';
import { eventually, json, post } from '../support/service.js';
import { ADMIN_ONLY } from './route-scopes.js';
import { type Actor, expectProblem, type Platform, REDEEM_PATH, type Receiver, Security, SPEAKERS, startReceiver } from './support.js';

/**
 * Threat: broken object-level authorization (OWASP API1). Owner B and platform P2 call every route
 * with owner A's and platform P1's ids; docs/CONTRACT.md and origin/README say another owner's object answers
 * 404 exactly like a missing one, and another platform is refused (403) or sees nothing.
 */

describe('object-level authorization: another owner, another platform', () => {
  let s: Security;
  let ownerA: Actor;
  let ownerB: Actor;
  let voiceA: string;
  let voiceB: string;
  let p1: Platform;
  let p2: Platform;
  let licenceA: { licenseId: string; token: string };
  let licenceB: { licenseId: string; token: string };
  let webhookA: string;
  let webhookP1: string;
  let requestOnA: string;
  let checkOnA: string;
  /** P1's Content Credentials: its CA, a file of A's voice it marked and signed after an approval, the manifest it deposited. */
  let caOfP1: string;
  let certificateP1: string;
  let watermarkP1: WatermarkGrant;
  let signedByP1: Uint8Array;
  let manifestP1: string;
  let receiver: Receiver;
  const attempts: { route: string; input: string }[] = [];

  const asB = () => ({ ...ownerB.auth });
  const asP2 = () => ({ 'x-api-key': p2.apiKey });
  const call = async (operationId: string, method: string, path: string, body?: unknown, headers: Record<string, string> = asB()) => {
    attempts.push({ route: operationId, input: `${method} ${path}` });
    return s.send(operationId, method, `${s.origin}${path}`, body, headers);
  };
  const in60Days = () => new Date(Date.now() + 60 * 86_400_000).toISOString();

  /** What owner A has; compared before and after every attack. */
  const stateOfA = async () => {
    const voices = await json(await fetch(`${s.origin}/api/v1/voices`, { headers: ownerA.auth }));
    const licences = await json(await fetch(`${s.origin}/api/v1/voices/${voiceA}/licenses`, { headers: ownerA.auth }));
    const webhooks = await json(await fetch(`${s.origin}/api/v1/webhooks`, { headers: ownerA.auth }));
    return { voices, licences, webhooks };
  };

  beforeAll(async () => {
    s = await Security.start('ola', { WEBHOOK_ALLOW_LOOPBACK: 'true' });
    receiver = await startReceiver();
    [ownerA, ownerB] = [await s.owner('owner-a'), await s.owner('owner-b')];
    [p1, p2] = [await s.platform('OLA Platform One'), await s.platform('OLA Platform Two')];
    voiceA = await s.enroll(ownerA, 'Voice of A', SPEAKERS.a);
    voiceB = await s.enroll(ownerB, 'Voice of B', SPEAKERS.b);
    await s.setSynthesisConsent(ownerA, voiceA, 'active');
    licenceA = await s.license(ownerA, voiceA, p1.name);
    licenceB = await s.license(ownerB, voiceB, p1.name);
    const hook = await s.send(
      'register webhook',
      'POST',
      `${s.origin}/api/v1/webhooks/register`,
      { url: `${receiver.url}/a`, events: ['license.revoked'] },
      ownerA.auth,
    );
    expect(hook.status).toBe(201);
    webhookA = (await json(hook)).webhook_id as string;
    await s.keyLive(p1.apiKey, p1.name);
    await s.keyLive(p2.apiKey, p2.name);
    const p1Hook = await s.send(
      'register webhook',
      'POST',
      `${s.origin}/api/v1/webhooks/register`,
      { url: `${receiver.url}/p1`, events: ['license.granted'] },
      { 'x-api-key': p1.apiKey },
    );
    expect(p1Hook.status).toBe(201);
    webhookP1 = (await json(p1Hook)).webhook_id as string;
    const asked = await s.send(
      'requestLicense',
      'POST',
      `${s.origin}/api/v1/voices/${voiceA}/license-requests`,
      { platform_name: p1.name, scopes: ['gaming'], description: 'Narration of audiobook chapters for the tests', expires_at: in60Days() },
      { 'x-api-key': p1.apiKey },
    );
    expect(asked.status).toBe(201);
    requestOnA = (await json(asked)).request_id as string;
    const check = await s.gate(p1.apiKey, { voice_id: voiceA, platform_name: p1.name, intended_use: 'music' });
    checkOnA = (await json(check)).check_id as string;
    await eventually(async () => (await s.auditEntries(ownerA.auth, `check_id=${checkOnA}`)).length === 1, 15_000);
    await contentCredentialsOfP1();
  }, 240_000);

  /** P1 registers its CA, synthesizes A's voice after an approval, marks and signs the file, and deposits its manifest. */
  async function contentCredentialsOfP1() {
    const { caPem, signer } = platformSigner(p1.name);
    caOfP1 = caPem;
    const asP1 = { 'x-api-key': p1.apiKey };
    const registered = await s.send(
      'registerSigningCertificate',
      'POST',
      `${s.origin}/api/v1/signing-certificates`,
      { certificate_pem: caPem },
      asP1,
    );
    expect(registered.status).toBe(201);
    certificateP1 = (await json(registered)).certificate_id as string;
    const approved = await s.approval(p1.apiKey, voiceA, p1.name);
    const redeemed = await post(`${s.edge}${REDEEM_PATH}`, { token: approved.authorization_token }, asP1);
    expect(redeemed.status).toBe(200);
    watermarkP1 = redeemResultSchema.parse(await json(redeemed)).watermark;
    const speech = (await decodeAudio(await readFile(SPEAKERS.a[0]!), { maxBytes: 2 ** 24, maxSeconds: 60, minSeconds: 0 })).samples;
    const receipt = await createOriginClient({ baseUrl: s.origin, apiKey: p1.apiKey }).audit.receipt(approved.check_id as string, {
      waitMs: 30_000,
    });
    signedByP1 = await embedAuthorization(
      pcm16Wav(markPcm(speech, 16_000, watermarkP1)),
      'audio/wav',
      { check_id: approved.check_id as string, receipt },
      signer,
    );
    // The mark is the origin's once the collector has brought the redemption from the edge.
    await eventually(async () => {
      const deposited = await s.call('depositManifest', `${s.origin}/api/v1/provenance/manifests`, {
        method: 'POST',
        headers: asP1,
        body: manifestForm(watermarkP1.id),
      });
      if (deposited.status !== 201) return false;
      manifestP1 = (await json(deposited)).manifestId as string;
      return true;
    }, 30_000);
  }

  const manifestForm = (watermarkId: string) => {
    const form = new FormData();
    form.append('manifest', new Blob([storeOfWav(signedByP1)]), 'manifest.c2pa');
    form.append('watermark_id', watermarkId);
    return form;
  };
  const audioForm = (audio: Uint8Array) => {
    const form = new FormData();
    form.append('audio', new Blob([audio], { type: 'audio/wav' }), 'synthesized.wav');
    return form;
  };

  /**
   * The public Content Credentials routes answer an owner or a platform exactly as they answer anyone:
   * `ask` called with `headers` and anonymously, the answers compared as `comparable` reads them (it
   * drops what each call makes anew, such as a verification's own audit id).
   */
  async function sameAsAnyone(
    operationId: string,
    headers: Record<string, string>,
    ask: (headers: Record<string, string>) => Promise<Response>,
    comparable: (response: Response) => Promise<unknown>,
  ) {
    attempts.push({ route: operationId, input: "another caller's view of a public Content Credentials answer" });
    const [asCaller, asAnyone] = [await ask(headers), await ask({})];
    expect(asCaller.status).toBe(200);
    expect(asAnyone.status).toBe(200);
    const [callerSees, anyoneSees] = [await comparable(asCaller), await comparable(asAnyone)];
    expect(callerSees, JSON.stringify({ callerSees, anyoneSees })).toEqual(anyoneSees);
  }
  const verifyAs = (headers: Record<string, string>) =>
    s.call('verifyProvenance', `${s.origin}/api/v1/provenance/verify`, { method: 'POST', headers, body: audioForm(signedByP1) });
  const withoutCheckId = async (response: Response) => {
    const { check_id: _, ...verification } = await json(response);
    return verification;
  };
  /** A match's receipt proves the decision against the newest checkpoint, which each audited lookup may move on. */
  const withReceiptsNamed = async (response: Response) =>
    ((await json(response)).matches as { authorization: { receipt: unknown } }[]).map((match) => ({
      ...match,
      authorization: { ...match.authorization, receipt: match.authorization.receipt === null ? null : 'a receipt' },
    }));
  const byBindingAs = (headers: Record<string, string>) =>
    s.call(
      'queryByBinding',
      `${s.origin}/api/v1/provenance/matches/byBinding?alg=${encodeURIComponent(watermarkP1.alg)}&value=${watermarkP1.id}`,
      { headers },
    );
  const byContentAs = (headers: Record<string, string>) =>
    s.call('queryByContent', `${s.origin}/api/v1/provenance/matches/byContent`, { method: 'POST', headers, body: audioForm(signedByP1) });
  const manifestBytes = async (response: Response) => new Uint8Array(await response.arrayBuffer());
  const manifestAs = (headers: Record<string, string>) =>
    s.call('getManifest', `${s.origin}/api/v1/provenance/manifests/${manifestP1}`, { headers });

  afterAll(async () => {
    await receiver?.close();
    await s?.stop();
  });

  /** One case per owner-scoped route; the keys must be exactly the routes the contracts declare. */
  const ownerCases: Record<string, () => Promise<void>> = {
    listVoices: async () => {
      const response = await call('listVoices', 'GET', '/api/v1/voices');
      expect(response.status).toBe(200);
      const ids = ((await json(response)).voices as { voice_id: string }[]).map((v) => v.voice_id);
      expect(ids).toContain(voiceB);
      expect(ids).not.toContain(voiceA);
    },
    checkPlatformName: async () => {
      // Platform names are what every owner licenses by: shared, not owned. B learns the name it asked about and nothing else.
      const response = await call('checkPlatformName', 'GET', `/api/v1/platform-names/${encodeURIComponent(p1.name)}`);
      expect(response.status).toBe(200);
      expect(await json(response)).toEqual({ platform_name: p1.name });
    },
    deleteVoice: async () => {
      await expectProblem(await call('deleteVoice', 'DELETE', `/api/v1/voices/${voiceA}`), 404, 'not_found');
    },
    setVoiceConsent: async () => {
      for (const status of ['withdrawn', 'active']) {
        await expectProblem(await call('setVoiceConsent', 'PUT', `/api/v1/voices/${voiceA}/consent`, { status }), 404, 'not_found');
      }
    },
    createLicense: async () => {
      const body = {
        platform_name: p2.name,
        scopes: ['commercial'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: in60Days(),
      };
      await expectProblem(await call('createLicense', 'POST', `/api/v1/voices/${voiceA}/licenses`, body), 404, 'not_found');
    },
    listLicenses: async () => {
      await expectProblem(await call('listLicenses', 'GET', `/api/v1/voices/${voiceA}/licenses`), 404, 'not_found');
    },
    renewLicense: async () => {
      const body = { expires_at: in60Days() };
      await expectProblem(
        await call('renewLicense', 'POST', `/api/v1/voices/${voiceA}/licenses/${licenceA.licenseId}/renew`, body),
        404,
        'not_found',
      );
      // A's licence reached through B's own voice is still not B's.
      await expectProblem(
        await call('renewLicense', 'POST', `/api/v1/voices/${voiceB}/licenses/${licenceA.licenseId}/renew`, body),
        404,
        'not_found',
      );
    },
    revokeLicense: async () => {
      await expectProblem(
        await call('revokeLicense', 'POST', `/api/v1/voices/${voiceA}/licenses/${licenceA.licenseId}/revoke`),
        404,
        'not_found',
      );
      await expectProblem(
        await call('revokeLicense', 'POST', `/api/v1/voices/${voiceB}/licenses/${licenceA.licenseId}/revoke`),
        404,
        'not_found',
      );
      // And A cannot revoke B's licence through A's voice either.
      await expectProblem(
        await call('revokeLicense', 'POST', `/api/v1/voices/${voiceA}/licenses/${licenceB.licenseId}/revoke`, undefined, ownerA.auth),
        404,
        'not_found',
      );
    },
    grantConsent: async () => {
      // A consent is the caller's own: B cannot enroll with A's consent (nor A with B's).
      const consentOfA = await s.consent(ownerA);
      const form = await s.enrollForm('Stolen consent', consentOfA, SPEAKERS.b.slice(0, 1));
      attempts.push({ route: 'grantConsent', input: 'enroll with another owner consent_id' });
      const response = await s.call('grantConsent', `${s.origin}/api/v1/voices/enroll`, { method: 'POST', headers: asB(), body: form });
      await expectProblem(response, 403, 'consent_required');
    },
    enrollVoice: async () => {
      const consentOfB = await s.consent(ownerB);
      const form = await s.enrollForm('Stolen consent', consentOfB, SPEAKERS.a.slice(0, 1));
      attempts.push({ route: 'enrollVoice', input: 'enroll with another owner consent_id' });
      const response = await s.call('enrollVoice', `${s.origin}/api/v1/voices/enroll`, {
        method: 'POST',
        headers: ownerA.auth,
        body: form,
      });
      await expectProblem(response, 403, 'consent_required');
    },
    openVoiceDispute: async () => {
      // A dispute is filed with the claimant's own consent: another owner's is refused as at enrollment.
      const form = await s.enrollForm('Disputed with stolen consent', await s.consent(ownerA), SPEAKERS.a.slice(0, 1));
      attempts.push({ route: 'openVoiceDispute', input: 'dispute with another owner consent_id' });
      const response = await s.call('openVoiceDispute', `${s.origin}/api/v1/voices/disputes`, {
        method: 'POST',
        headers: asB(),
        body: form,
      });
      await expectProblem(response, 403, 'consent_required');
    },
    listVoiceDisputes: async () => {
      const response = await call('listVoiceDisputes', 'GET', '/api/v1/voices/disputes');
      expect(response.status).toBe(200);
      expect((await json(response)).disputes).toEqual([]);
    },
    listLicenseRequests: async () => {
      await expectProblem(await call('listLicenseRequests', 'GET', `/api/v1/voices/${voiceA}/license-requests`), 404, 'not_found');
    },
    approveLicenseRequest: async () => {
      const path = `/api/v1/voices/${voiceA}/license-requests/${requestOnA}/approve`;
      await expectProblem(await call('approveLicenseRequest', 'POST', path, {}), 404, 'not_found');
      // A's request reached through B's own voice is still not B's.
      const throughB = `/api/v1/voices/${voiceB}/license-requests/${requestOnA}/approve`;
      await expectProblem(await call('approveLicenseRequest', 'POST', throughB, {}), 404, 'not_found');
    },
    declineLicenseRequest: async () => {
      const path = `/api/v1/voices/${voiceA}/license-requests/${requestOnA}/decline`;
      await expectProblem(await call('declineLicenseRequest', 'POST', path, {}), 404, 'not_found');
    },
    getLicenseRequest: async () => {
      // A request is its platform's to read; no owner (not even the voice's) reads it here.
      await expectProblem(await call('getLicenseRequest', 'GET', `/api/v1/license-requests/${requestOnA}`), 404, 'not_found');
    },
    measureRecordings: async () => {
      // Measures only what B sends: the answer holds B's file and no voice, owner or id of anyone.
      const form = new FormData();
      form.set('audio', new Blob([await readFile(SPEAKERS.b[0]!)], { type: 'audio/ogg' }), 'take.opus');
      attempts.push({ route: 'measureRecordings', input: "measure a recording, looking for another owner's data" });
      const response = await s.call('measureRecordings', `${s.origin}/api/v1/voices/measure`, {
        method: 'POST',
        headers: asB(),
        body: form,
      });
      expect(response.status).toBe(200);
      const body = await json(response);
      expect(Object.keys(body).sort()).toEqual(['files', 'speech_seconds']);
      expect(JSON.stringify(body)).not.toContain(voiceA);
      expect(JSON.stringify(body)).not.toContain(ownerA.userId);
    },
    createConsentChallenge: async () => {
      // A challenge is bound to whoever asked: B's holds nothing of A's, and names no voice.
      attempts.push({ route: 'createConsentChallenge', input: "ask for a spoken-consent challenge, looking for another owner's data" });
      const response = await s.call('createConsentChallenge', `${s.origin}/api/v1/consents/challenges`, { method: 'POST', headers: asB() });
      expect(response.status).toBe(201);
      const body = JSON.stringify(await json(response));
      expect(body).not.toContain(voiceA);
      expect(body).not.toContain(ownerA.userId);
    },
    downloadSpokenConsentRecording: async () => {
      // Another owner's voice answers as a voice without a recording: the audio and the voice's existence stay A's.
      attempts.push({ route: 'downloadSpokenConsentRecording', input: "download another owner's spoken-consent recording" });
      const response = await s.call('downloadSpokenConsentRecording', `${s.origin}/api/v1/voices/${voiceA}/spoken-consent`, {
        headers: asB(),
      });
      await expectProblem(response, 404, 'not_found');
    },
    reenrollVoice: async () => {
      const form = new FormData();
      form.set('audio', new Blob([await readFile(SPEAKERS.b[0]!)], { type: 'audio/ogg' }), 'take.opus');
      attempts.push({ route: 'reenrollVoice', input: "replace another owner's voiceprint" });
      const response = await s.call('reenrollVoice', `${s.origin}/api/v1/voices/${voiceA}/re-enroll`, {
        method: 'POST',
        headers: asB(),
        body: form,
      });
      await expectProblem(response, 404, 'not_found');
    },
    compareVoices: async () => {
      const form = new FormData();
      form.set('audio1', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'probe.opus');
      form.set('voice_id', voiceA);
      attempts.push({ route: 'compareVoices', input: 'compare against another owner voice_id' });
      const response = await s.call('compareVoices', `${s.origin}/api/v1/detection/compare`, {
        method: 'POST',
        headers: asB(),
        body: form,
      });
      await expectProblem(response, 404, 'not_found');
    },
    registerWebhook: async () => {
      // B's registration is B's: it never shows up for A, and A's never for B (listWebhooks below).
      const response = await call('registerWebhook', 'POST', '/api/v1/webhooks/register', {
        url: `${receiver.url}/b`,
        events: ['voice.deleted'],
      });
      expect(response.status).toBe(201);
      const idOfB = (await json(response)).webhook_id as string;
      const ofA = await json(await fetch(`${s.origin}/api/v1/webhooks`, { headers: ownerA.auth }));
      expect((ofA.webhooks as { webhook_id: string }[]).map((w) => w.webhook_id)).not.toContain(idOfB);
      await expectProblem(
        await s.send('deleteWebhook', 'DELETE', `${s.origin}/api/v1/webhooks/${idOfB}`, undefined, ownerA.auth),
        404,
        'not_found',
      );
    },
    listWebhooks: async () => {
      const response = await call('listWebhooks', 'GET', '/api/v1/webhooks');
      expect(response.status).toBe(200);
      expect(((await json(response)).webhooks as { webhook_id: string }[]).map((w) => w.webhook_id)).not.toContain(webhookA);
    },
    deleteWebhook: async () => {
      await expectProblem(await call('deleteWebhook', 'DELETE', `/api/v1/webhooks/${webhookA}`), 404, 'not_found');
    },
    testWebhook: async () => {
      const before = receiver.requests.length;
      await expectProblem(await call('testWebhook', 'POST', `/api/v1/webhooks/${webhookA}/test`), 404, 'not_found');
      expect(receiver.requests.length).toBe(before);
    },
    enableWebhook: async () => {
      await expectProblem(await call('enableWebhook', 'POST', `/api/v1/webhooks/${webhookA}/enable`), 404, 'not_found');
    },
    rotateWebhookSecret: async () => {
      await expectProblem(await call('rotateWebhookSecret', 'POST', `/api/v1/webhooks/${webhookA}/rotate-secret`), 404, 'not_found');
    },
    listWebhookDeliveries: async () => {
      await expectProblem(await call('listWebhookDeliveries', 'GET', `/api/v1/webhooks/${webhookA}/deliveries`), 404, 'not_found');
    },
    changePassword: async () => {
      // The route acts on the caller's own account only: A's password is just a wrong password for B.
      const response = await call('changePassword', 'POST', '/api/v1/auth/password', {
        current_password: ownerA.password,
        new_password: 'owner B tries to set this',
      });
      await expectProblem(response, 401, 'invalid_credentials');
      expect((await post(`${s.origin}/api/v1/auth/login`, { email: ownerA.email, password: ownerA.password })).status).toBe(200);
    },
    listAuditEntries: async () => {
      for (const query of [`check_id=${checkOnA}`, `voice_id=${voiceA}`, `platform_name=${encodeURIComponent(p1.name)}`, '']) {
        const response = await call('listAuditEntries', 'GET', `/api/v1/protect/audit-log?${query}`);
        expect(response.status).toBe(200);
        const entries = (await json(response)).entries as { check_id: string; voice_id: string | null }[];
        expect(entries.map((e) => e.check_id)).not.toContain(checkOnA);
        expect(entries.filter((e) => e.voice_id === voiceA)).toEqual([]);
      }
    },
    auditReceipt: async () => {
      await expectProblem(await call('auditReceipt', 'GET', `/api/v1/protect/audit-log/${checkOnA}/receipt`), 404, 'not_found');
    },
    // A's voice in a file P1 signed: what B learns of it is what anyone learns (the verdict, the
    // authorization, the voice checked against A's only because the signer is the platform named).
    verifyProvenance: async () => {
      await sameAsAnyone('verifyProvenance', asB(), verifyAs, withoutCheckId);
    },
    queryByBinding: async () => {
      await sameAsAnyone('queryByBinding', asB(), byBindingAs, withReceiptsNamed);
    },
    queryByContent: async () => {
      await sameAsAnyone('queryByContent', asB(), byContentAs, withReceiptsNamed);
    },
    getManifest: async () => {
      await sameAsAnyone('getManifest', asB(), manifestAs, manifestBytes);
    },
  };

  it("answers another owner's ids with 404 (or nothing visible) on every owner-scoped route, and changes nothing", async () => {
    const before = await stateOfA();
    for (const [route, attack] of Object.entries(ownerCases)) {
      try {
        await attack();
      } catch (error) {
        throw new Error(`${route}: ${(error as Error).message}`);
      }
    }
    expect(await stateOfA()).toEqual(before);
    // A's voice still stands at the edge exactly as before: consent active, A's licence honoured.
    const answer = await s.approval(p1.apiKey, voiceA, p1.name);
    expect(answer.status).toBe('approved');
    // The test delivery B could not trigger was never sent.
    expect(receiver.requests.filter((r) => r.url === '/a')).toEqual([]);
  });

  it('answers 403 to an owner on every admin-only route, and creates nothing', async () => {
    const platformsBefore = await json(await fetch(`${s.origin}/api/v1/platforms`, { headers: s.admin.auth }));
    const keysBefore = await json(await fetch(`${s.origin}/api/v1/platforms/${p1.platformId}/api-keys`, { headers: s.admin.auth }));
    expect(ADMIN_ONLY.length).toBeGreaterThan(0);
    for (const contract of ADMIN_ONLY) {
      const path = contract.path
        .replace('{platform_id}', p1.platformId)
        .replace('{key_id}', p1.keyId)
        .replace('{certificate_id}', certificateP1);
      // A body the route would take from an administrator: the caller, not the body, is what is refused.
      const bodies: Record<string, unknown> = {
        createPlatform: { name: 'Owner made platform' },
        registerSigningCertificate: { certificate_pem: platformSigner('Owner made platform').caPem },
      };
      const body = contract.method === 'post' ? (bodies[contract.operationId] ?? {}) : undefined;
      const response = await call(contract.operationId, contract.method.toUpperCase(), path, body);
      await expectProblem(response, 403, 'forbidden');
    }
    expect(await json(await fetch(`${s.origin}/api/v1/platforms`, { headers: s.admin.auth }))).toEqual(platformsBefore);
    expect(await json(await fetch(`${s.origin}/api/v1/platforms/${p1.platformId}/api-keys`, { headers: s.admin.auth }))).toEqual(
      keysBefore,
    );
    // P1's key still works: the owner's revoke attempt did nothing.
    await s.keyLive(p1.apiKey, p1.name);
  });

  /** One case per platform-scoped route (either plane). */
  const platformCases: Record<string, () => Promise<void>> = {
    preSynthesisCheck: async () => {
      // P2's key naming P1 as the platform: the licence of P1 must not be borrowed.
      attempts.push({ route: 'preSynthesisCheck', input: 'platform_name of another platform' });
      const response = await s.gate(p2.apiKey, { voice_id: voiceA, platform_name: p1.name, intended_use: 'audiobook' });
      await expectProblem(response, 403, 'platform_mismatch');
      attempts.push({ route: 'preSynthesisCheck', input: "another platform's licence_token" });
      const own = await s.gate(p2.apiKey, {
        voice_id: voiceA,
        platform_name: p2.name,
        intended_use: 'audiobook',
        license_token: licenceA.token,
      });
      expect(own.status).toBe(200);
      expect(await json(own)).toMatchObject({ status: 'blocked' });
    },
    redeemAuthorization: async () => {
      const approved = await s.approval(p1.apiKey, voiceA, p1.name);
      const token = approved.authorization_token as string;
      attempts.push({ route: 'redeemAuthorization', input: "another platform's token" });
      await expectProblem(
        await s.send('redeem', 'POST', `${s.edge}${REDEEM_PATH}`, { token }, { 'x-api-key': p2.apiKey }),
        403,
        'platform_mismatch',
      );
      attempts.push({ route: 'redeemAuthorization', input: "an owner's Bearer on a platform's token" });
      await expectProblem(await s.send('redeem', 'POST', `${s.edge}${REDEEM_PATH}`, { token }, ownerB.auth), 403, 'platform_mismatch');
      // The refused attempts did not spend it: P1 still redeems it once.
      const mine = await s.send('redeem', 'POST', `${s.edge}${REDEEM_PATH}`, { token }, { 'x-api-key': p1.apiKey });
      expect(mine.status).toBe(200);
    },
    screenSample: async () => {
      // P2's key screening under P1's name: the answer (and the audit entry) would be P1's.
      const form = new FormData();
      form.set('audio', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'sample.opus');
      form.set('platform_name', p1.name);
      attempts.push({ route: 'screenSample', input: 'platform_name of another platform' });
      const response = await s.call('screenSample', `${s.origin}/api/v1/protect/screen`, {
        method: 'POST',
        headers: { 'x-api-key': p2.apiKey },
        body: form,
      });
      await expectProblem(response, 403, 'platform_mismatch');
    },
    requestLicense: async () => {
      const body = {
        platform_name: p1.name,
        scopes: ['gaming'],
        description: 'Narration of audiobook chapters for the tests',
        expires_at: in60Days(),
      };
      const response = await call('requestLicense', 'POST', `/api/v1/voices/${voiceA}/license-requests`, body, { 'x-api-key': p2.apiKey });
      await expectProblem(response, 403, 'platform_mismatch');
    },
    getLicenseRequest: async () => {
      const response = await call('getLicenseRequest', 'GET', `/api/v1/license-requests/${requestOnA}`, undefined, {
        'x-api-key': p2.apiKey,
      });
      await expectProblem(response, 404, 'not_found');
      // The control: P1 reads its own.
      expect(
        (await call('getLicenseRequest', 'GET', `/api/v1/license-requests/${requestOnA}`, undefined, { 'x-api-key': p1.apiKey })).status,
      ).toBe(200);
    },
    registerWebhook: async () => {
      // P2 may subscribe to licence events, which reach P2 only for P2's own licences; never to an owner's events.
      const body = { url: `${receiver.url}/p2`, events: ['voice.deleted'] };
      await expectProblem(
        await call('registerWebhook', 'POST', '/api/v1/webhooks/register', body, { 'x-api-key': p2.apiKey }),
        422,
        'validation_failed',
      );
    },
    listWebhooks: async () => {
      const response = await call('listWebhooks', 'GET', '/api/v1/webhooks', undefined, { 'x-api-key': p2.apiKey });
      const ids = ((await json(response)).webhooks as { webhook_id: string }[]).map((w) => w.webhook_id);
      expect(ids).not.toContain(webhookP1);
      expect(ids).not.toContain(webhookA);
    },
    deleteWebhook: async () => {
      for (const id of [webhookP1, webhookA]) {
        await expectProblem(
          await call('deleteWebhook', 'DELETE', `/api/v1/webhooks/${id}`, undefined, { 'x-api-key': p2.apiKey }),
          404,
          'not_found',
        );
      }
    },
    testWebhook: async () => {
      await expectProblem(
        await call('testWebhook', 'POST', `/api/v1/webhooks/${webhookP1}/test`, undefined, { 'x-api-key': p2.apiKey }),
        404,
        'not_found',
      );
    },
    enableWebhook: async () => {
      await expectProblem(
        await call('enableWebhook', 'POST', `/api/v1/webhooks/${webhookP1}/enable`, undefined, { 'x-api-key': p2.apiKey }),
        404,
        'not_found',
      );
    },
    rotateWebhookSecret: async () => {
      const path = `/api/v1/webhooks/${webhookP1}/rotate-secret`;
      await expectProblem(await call('rotateWebhookSecret', 'POST', path, undefined, { 'x-api-key': p2.apiKey }), 404, 'not_found');
    },
    listWebhookDeliveries: async () => {
      const path = `/api/v1/webhooks/${webhookP1}/deliveries`;
      await expectProblem(await call('listWebhookDeliveries', 'GET', path, undefined, { 'x-api-key': p2.apiKey }), 404, 'not_found');
    },
    compareVoices: async () => {
      // A platform holds no voices: naming an owner's enrolled voice must not compare against it.
      const form = new FormData();
      form.set('audio1', new Blob([await readFile(SPEAKERS.a[0]!)], { type: 'audio/ogg' }), 'probe.opus');
      form.set('voice_id', voiceA);
      attempts.push({ route: 'compareVoices', input: "a platform key naming an owner's voice_id" });
      const response = await s.call('compareVoices', `${s.origin}/api/v1/detection/compare`, {
        method: 'POST',
        headers: { 'x-api-key': p2.apiKey },
        body: form,
      });
      await expectProblem(response, 422, 'validation_failed');
    },
    listAuditEntries: async () => {
      for (const query of [`check_id=${checkOnA}`, `voice_id=${voiceA}`, `platform_name=${encodeURIComponent(p1.name)}`, '']) {
        attempts.push({ route: 'listAuditEntries', input: `api key of another platform: ${query}` });
        const entries = await s.auditEntries({ 'x-api-key': p2.apiKey }, query);
        expect(entries.filter((e) => e.platform_name !== p2.name)).toEqual([]);
      }
      // The control: P1 does see its own check.
      expect((await s.auditEntries({ 'x-api-key': p1.apiKey }, `check_id=${checkOnA}`)).length).toBe(1);
    },
    auditReceipt: async () => {
      const receipt = `/api/v1/protect/audit-log/${checkOnA}/receipt`;
      await expectProblem(await call('auditReceipt', 'GET', receipt, undefined, { 'x-api-key': p2.apiKey }), 404, 'not_found');
      // The control: P1's own check is its to ask about (a receipt, or pending until a checkpoint covers it).
      const own = await s.send('auditReceipt', 'GET', `${s.origin}${receipt}`, undefined, { 'x-api-key': p1.apiKey });
      expect([200, 503]).toContain(own.status);
    },
    registerSigningCertificate: async () => {
      // P2 cannot take P1's CA (files P1 signs would verify as P2's), nor register one in P1's name.
      const ownCa = platformSigner(p2.name).caPem;
      const url = '/api/v1/signing-certificates';
      await expectProblem(await call('registerSigningCertificate', 'POST', url, { certificate_pem: caOfP1 }, asP2()), 409, 'conflict');
      await expectProblem(
        await call('registerSigningCertificate', 'POST', url, { certificate_pem: ownCa, platform_name: p1.name }, asP2()),
        403,
        'platform_mismatch',
      );
    },
    listSigningCertificates: async () => {
      const own = await call('listSigningCertificates', 'GET', '/api/v1/signing-certificates', undefined, asP2());
      expect(own.status).toBe(200);
      expect(JSON.stringify(await json(own))).not.toContain(certificateP1);
      await expectProblem(
        await call(
          'listSigningCertificates',
          'GET',
          `/api/v1/signing-certificates?platform_name=${encodeURIComponent(p1.name)}`,
          undefined,
          asP2(),
        ),
        403,
        'platform_mismatch',
      );
    },
    revokeSigningCertificate: async () => {
      const path = `/api/v1/signing-certificates/${certificateP1}/revoke`;
      await expectProblem(await call('revokeSigningCertificate', 'POST', path, undefined, asP2()), 404, 'not_found');
      // The control: P1's certificate is still live.
      const listed = await json(await fetch(`${s.origin}/api/v1/signing-certificates`, { headers: { 'x-api-key': p1.apiKey } }));
      const certificates = listed.certificates as { certificate_id: string; revoked_at: string | null }[];
      expect(certificates.find((certificate) => certificate.certificate_id === certificateP1)?.revoked_at).toBeNull();
    },
    depositManifest: async () => {
      // The mark was issued to P1: P2 cannot attach a manifest to it.
      attempts.push({ route: 'depositManifest', input: "a manifest for another platform's mark" });
      const response = await s.call('depositManifest', `${s.origin}/api/v1/provenance/manifests`, {
        method: 'POST',
        headers: asP2(),
        body: manifestForm(watermarkP1.id),
      });
      await expectProblem(response, 403, 'platform_mismatch');
    },
    verifyProvenance: async () => {
      await sameAsAnyone('verifyProvenance', asP2(), verifyAs, withoutCheckId);
    },
    queryByBinding: async () => {
      await sameAsAnyone('queryByBinding', asP2(), byBindingAs, withReceiptsNamed);
    },
    queryByContent: async () => {
      await sameAsAnyone('queryByContent', asP2(), byContentAs, withReceiptsNamed);
    },
    getManifest: async () => {
      await sameAsAnyone('getManifest', asP2(), manifestAs, manifestBytes);
    },
  };

  it("refuses (403) or hides another platform's objects on every platform-scoped route", async () => {
    for (const [route, attack] of Object.entries(platformCases)) {
      try {
        await attack();
      } catch (error) {
        throw new Error(`${route}: ${(error as Error).message}`);
      }
    }
  });
});
