import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readSpeechManifest } from '../../origin/src/voiceprint/speech-manifest.js';
import { json, post, type RunningService, startService } from '../support/service.js';
import { SPEECH_DIR } from '../support/speech.js';
import type { Bench, Figure } from './bench.js';
import { percentile, round } from './support/stats.js';

const GATE_PATH = '/api/v1/protect/pre-synthesis-check';
const ADMIN = { email: 'admin@bench.example', password: 'bench-admin-password-long-enough' };
const OWNER = { email: 'owner@bench.example', password: 'bench-owner-password-long-enough' };
/** A change that has not reached the edge by then counts as a failure, not a slow sample. */
const PROPAGATION_TIMEOUT_MS = 10_000;

type Headers = Record<string, string>;
const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

async function expectStatus(response: Response, status: number, what: string): Promise<Record<string, unknown>> {
  const body = await json(response);
  if (response.status !== status) throw new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** Asks the edge again and again, back to back, until `done` holds; resolves when it first does. */
async function pollEdge(send: () => Promise<Response>, done: (response: Response, body: Record<string, unknown>) => boolean) {
  const deadline = performance.now() + PROPAGATION_TIMEOUT_MS;
  while (performance.now() < deadline) {
    const response = await send();
    if (done(response, await json(response))) return performance.now();
  }
  throw new Error(`the edge did not reflect the change within ${PROPAGATION_TIMEOUT_MS} ms`);
}

/** Milliseconds from sending `change` to the origin until the edge first answers as `reflected` says. */
async function propagation(
  change: () => Promise<Response>,
  probe: Parameters<typeof pollEdge>[0],
  reflected: Parameters<typeof pollEdge>[1],
) {
  const started = performance.now();
  const response = await change();
  if (!response.ok) throw new Error(`the origin refused the change: ${response.status} ${await response.text()}`);
  return (await pollEdge(probe, reflected)) - started;
}

function latencyFigures(key: string, label: string, samplesMs: number[]): Figure[] {
  return [
    { key: `${key}.p50`, label: `${label}: p50`, value: round(percentile(samplesMs, 0.5), 1), unit: 'ms' },
    { key: `${key}.p99`, label: `${label}: p99`, value: round(percentile(samplesMs, 0.99), 1), unit: 'ms' },
  ];
}

interface Session {
  service: RunningService;
  adminToken: string;
  platformId: string;
  platformName: string;
}

async function issueKey(session: Session) {
  const response = await post(
    `${session.service.originUrl}/api/v1/platforms/${session.platformId}/api-keys`,
    {},
    bearer(session.adminToken),
  );
  return (await expectStatus(response, 201, 'issue an API key')) as { key_id: string; api_key: string };
}

const gateCheck = (session: Session, apiKey: string, voiceId: string) => () =>
  post(
    `${session.service.edgeUrl}${GATE_PATH}`,
    { voice_id: voiceId, platform_name: session.platformName, intended_use: 'audiobook' },
    { 'x-api-key': apiKey },
  );

async function keyRevocationSamples(session: Session, count: number): Promise<number[]> {
  const samples: number[] = [];
  for (let sample = 0; sample < count; sample++) {
    const { key_id, api_key } = await issueKey(session);
    const check = gateCheck(session, api_key, randomUUID());
    await pollEdge(check, (response) => response.status === 200);
    const revoke = () =>
      fetch(`${session.service.originUrl}/api/v1/platforms/${session.platformId}/api-keys/${key_id}`, {
        method: 'DELETE',
        headers: bearer(session.adminToken),
      });
    samples.push(await propagation(revoke, check, (response) => response.status === 401));
  }
  return samples;
}

/** A route that is not built yet answers 404 `route_not_found`; one that is built answers anything else. */
async function routeAnswers(method: string, url: string, headers: Headers): Promise<boolean> {
  const response = await fetch(url, { method, headers: { 'content-type': 'application/json', ...headers }, body: '{}' });
  const body: Record<string, unknown> = await json(response).catch(() => ({}));
  return !(response.status === 404 && body.code === 'route_not_found');
}

/** Several clips of one speaker of the committed speech fixtures, enough for the ≥ 10 s of speech enrollment needs. */
function enrollmentForm(consentId: string): FormData {
  const recordings = readSpeechManifest(SPEECH_DIR);
  const speaker = recordings[0]!.speaker;
  const form = new FormData();
  let seconds = 0;
  for (const recording of recordings) {
    if (recording.speaker !== speaker || seconds >= 30) continue;
    form.append(
      'audio',
      new Blob([readFileSync(join(SPEECH_DIR, recording.path))], { type: 'audio/ogg' }),
      recording.path.split('/').pop(),
    );
    seconds += recording.seconds;
  }
  form.append('name', 'Bench voice');
  form.append('consent_id', consentId);
  return form;
}

/** An owner's enrolled voice with synthesis consent, and a key of the bench platform. */
async function licensableVoice(session: Session) {
  const origin = session.service.originUrl;
  await expectStatus(await post(`${origin}/api/v1/auth/register`, OWNER), 201, 'register the owner');
  const login = await expectStatus(await post(`${origin}/api/v1/auth/login`, OWNER), 200, 'log the owner in');
  const owner = bearer(login.access_token as string);
  const consent = await expectStatus(
    await post(`${origin}/api/v1/consents`, { type: 'biometric', statement_version: '1', accepted: true }, owner),
    201,
    'grant biometric consent',
  );
  const enrolled = await expectStatus(
    await fetch(`${origin}/api/v1/voices/enroll`, { method: 'POST', headers: owner, body: enrollmentForm(consent.consent_id as string) }),
    201,
    'enroll a voice',
  );
  const voiceId = enrolled.voice_id as string;
  const setSynthesisConsent = (status: 'active' | 'withdrawn') =>
    fetch(`${origin}/api/v1/voices/${voiceId}/consent`, {
      method: 'PUT',
      headers: { ...owner, 'content-type': 'application/json' },
      body: JSON.stringify({ status }),
    });
  await expectStatus(await setSynthesisConsent('active'), 200, 'grant synthesis consent');
  const { api_key } = await issueKey(session);
  const grantLicence = async () =>
    (
      await expectStatus(
        await post(
          `${origin}/api/v1/voices/${voiceId}/licenses`,
          {
            platform_name: session.platformName,
            scopes: ['audiobook'],
            description: 'Narration of audiobook chapters for the tests',
            expires_at: new Date(Date.now() + 86_400_000).toISOString(),
          },
          owner,
        ),
        201,
        'grant a licence',
      )
    ).license_id as string;
  const revokeLicence = (licenceId: string) => post(`${origin}/api/v1/voices/${voiceId}/licenses/${licenceId}/revoke`, {}, owner);
  return { check: gateCheck(session, api_key, voiceId), setSynthesisConsent, grantLicence, revokeLicence };
}

const approved = (_response: Response, body: Record<string, unknown>) => body.status === 'approved';
const blockedWith = (reason: string) => (_response: Response, body: Record<string, unknown>) =>
  body.status === 'blocked' && body.reason === reason;

const bench: Bench = {
  title: 'Revocation latency, origin to edge (both planes as `npm start` runs them)',
  method: [
    'Both planes start through `test/support/service.ts` (origin on PGlite, edge on `wrangler dev`, free ports, a fresh data folder).',
    'Each sample: the change is made at the origin, then the edge is asked back to back (one request at a time, with the credential',
    'or voice concerned) until it first answers the changed way; the sample is the time from sending the change to that answer.',
    'Key revocation: a fresh API key the edge already accepts, `DELETE /api/v1/platforms/{id}/api-keys/{key_id}`, until the first 401.',
    'Consent withdrawal: an approved voice, `PUT /api/v1/voices/{id}/consent {status:"withdrawn"}`, until the first answer blocked with `no_consent`',
    '(consent then granted again and the approval awaited before the next sample). Licence revocation: a fresh licence the edge',
    'approves, `POST /api/v1/voices/{id}/licenses/{lid}/revoke`, until the first answer blocked with `no_license`. p99 is nearest-rank: with 30',
    'samples, the slowest. Locally KV has no propagation delay; in production a revoked key may be served from KV for up to 60 s.',
  ].join(' '),
  async run({ quick }) {
    // Absolute latencies are not compared by --quick; a few samples there only prove the path works.
    const keyCount = quick ? 5 : 30;
    const voiceCount = quick ? 3 : 30;
    const service = await startService({ env: { ADMIN_EMAIL: ADMIN.email, ADMIN_PASSWORD: ADMIN.password } });
    try {
      const login = await expectStatus(await post(`${service.originUrl}/api/v1/auth/login`, ADMIN), 200, 'log the admin in');
      const adminToken = login.access_token as string;
      const platformName = `bench-platform-${randomUUID().slice(0, 8)}`;
      const platform = await expectStatus(
        await post(`${service.originUrl}/api/v1/platforms`, { name: platformName }, bearer(adminToken)),
        201,
        'create the platform',
      );
      const session: Session = { service, adminToken, platformId: platform.platform_id as string, platformName };

      const figures = latencyFigures(
        'revocation.api_key',
        `API key revoked → first 401 at the edge (N=${keyCount})`,
        await keyRevocationSamples(session, keyCount),
      );

      const voiceRoutes = [
        ['POST', `${service.originUrl}/api/v1/voices/enroll`],
        ['PUT', `${service.originUrl}/api/v1/voices/${randomUUID()}/consent`],
        ['POST', `${service.originUrl}/api/v1/voices/${randomUUID()}/licenses`],
        ['POST', `${service.originUrl}/api/v1/voices/${randomUUID()}/licenses/${randomUUID()}/revoke`],
      ] as const;
      const answering = await Promise.all(voiceRoutes.map(([method, url]) => routeAnswers(method, url, bearer(adminToken))));
      if (answering.includes(false)) {
        const missing = voiceRoutes.filter((_, index) => !answering[index]).map(([method, url]) => `${method} ${new URL(url).pathname}`);
        return {
          figures,
          notes: [`consent withdrawal and licence revocation: not yet available (the origin has no ${missing.join(', ')})`],
        };
      }

      const voice = await licensableVoice(session);
      const withdrawals: number[] = [];
      const licenceRevocations: number[] = [];
      let licenceId = await voice.grantLicence();
      for (let sample = 0; sample < voiceCount; sample++) {
        await pollEdge(voice.check, approved);
        withdrawals.push(await propagation(() => voice.setSynthesisConsent('withdrawn'), voice.check, blockedWith('no_consent')));
        await expectStatus(await voice.setSynthesisConsent('active'), 200, 'grant synthesis consent again');
      }
      for (let sample = 0; sample < voiceCount; sample++) {
        await pollEdge(voice.check, approved);
        const revoking = licenceId;
        licenceRevocations.push(await propagation(() => voice.revokeLicence(revoking), voice.check, blockedWith('no_license')));
        licenceId = await voice.grantLicence();
      }
      figures.push(
        ...latencyFigures('revocation.consent', `consent withdrawn → first blocked answer at the edge (N=${voiceCount})`, withdrawals),
        ...latencyFigures('revocation.licence', `licence revoked → first blocked answer at the edge (N=${voiceCount})`, licenceRevocations),
      );
      return { figures, notes: [] };
    } finally {
      await service.stop();
      rmSync(service.dataDir, { recursive: true, force: true });
    }
  },
};

export default bench;
