import { readFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema';
import { edgeRoutes } from '@vip/shared-schema/routes/edge';
import { expect } from 'vitest';
import { eventually, json, post, type RunningService, type ServiceOptions, startService } from '../support/service.js';
import { ENROLL_CLIPS, OTHER_SPEAKER_CLIPS } from '../support/speech.js';

/** Shared helpers of the security suite: actors, fixtures and assertions every threat file uses. */

export const GATE_PATH = edgeRoutes.preSynthesisCheck.path;
export const REDEEM_PATH = edgeRoutes.redeem.path;

/** Two speakers, each well over the 10 s of speech an enrollment needs. */
export const SPEAKERS = { a: ENROLL_CLIPS, b: OTHER_SPEAKER_CLIPS };

export interface Actor {
  email: string;
  password: string;
  userId: string;
  accessToken: string;
  refreshToken: string;
  auth: { authorization: string };
}

export interface Platform {
  platformId: string;
  name: string;
  keyId: string;
  apiKey: string;
}

/** Every response a test saw, with the label of the request, for the data-exposure scan. */
export interface SeenResponse {
  label: string;
  status: number;
  headers: string;
  body: string;
}

export class Security {
  readonly seen: SeenResponse[] = [];
  private constructor(
    readonly service: RunningService,
    readonly admin: Actor,
  ) {}

  static async start(prefix: string, env: Record<string, string> = {}, options: ServiceOptions = {}): Promise<Security> {
    const admin = { email: `admin@${prefix}.example`, password: `${prefix}-admin-password-long` };
    const service = await startService({ ...options, env: { ADMIN_EMAIL: admin.email, ADMIN_PASSWORD: admin.password, ...env } });
    const security = new Security(service, await loginAs(service.originUrl, admin.email, admin.password));
    return security;
  }

  get origin(): string {
    return this.service.originUrl;
  }
  get edge(): string {
    return this.service.edgeUrl;
  }

  /** fetch that remembers what came back (headers and body text) for later scans. */
  async call(label: string, url: string, init: RequestInit = {}): Promise<Response> {
    const response = await fetch(url, init);
    const body = await response.clone().text();
    const headers = [...response.headers].map(([name, value]) => `${name}: ${value}`).join('\n');
    this.seen.push({ label, status: response.status, headers, body });
    return response;
  }

  send(label: string, method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
    return this.call(label, url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }

  async owner(name: string): Promise<Actor> {
    const email = `${name}-${Math.random().toString(36).slice(2, 8)}@owners.example`;
    const password = `${name}-password-long-enough`;
    const registered = await post(`${this.origin}/api/v1/auth/register`, { email, password });
    expect(registered.status).toBe(201);
    return loginAs(this.origin, email, password);
  }

  async platform(name: string): Promise<Platform> {
    const created = await post(`${this.origin}/api/v1/platforms`, { name }, this.admin.auth);
    expect(created.status).toBe(201);
    const platformId = (await json(created)).platform_id as string;
    const key = await this.apiKey(platformId);
    return { platformId, name, ...key };
  }

  async apiKey(platformId: string): Promise<{ keyId: string; apiKey: string }> {
    const response = await post(`${this.origin}/api/v1/platforms/${platformId}/api-keys`, {}, this.admin.auth);
    expect(response.status).toBe(201);
    const body = await json(response);
    return { keyId: body.key_id as string, apiKey: body.api_key as string };
  }

  /** Resolves once the edge index knows the key (the gate answers 200 for an unknown voice). */
  async keyLive(apiKey: string, platformName: string): Promise<void> {
    await eventually(
      async () =>
        (
          await post(
            `${this.edge}${GATE_PATH}`,
            { voice_id: crypto.randomUUID(), platform_name: platformName, intended_use: 'audiobook' },
            { 'x-api-key': apiKey },
          )
        ).status === 200,
      10_000,
    );
  }

  async consent(actor: Actor): Promise<string> {
    const response = await post(
      `${this.origin}/api/v1/consents`,
      { type: 'biometric', statement_version: BIOMETRIC_CONSENT_STATEMENT.version, accepted: true },
      actor.auth,
    );
    expect(response.status).toBe(201);
    return (await json(response)).consent_id as string;
  }

  async enrollForm(name: string, consentId: string, clips: string[]): Promise<FormData> {
    const form = new FormData();
    form.set('name', name);
    form.set('consent_id', consentId);
    for (const path of clips) form.append('audio', new Blob([await readFile(path)], { type: 'audio/ogg' }), path.split('/').at(-1));
    return form;
  }

  async enroll(actor: Actor, name: string, clips: string[] = SPEAKERS.a): Promise<string> {
    const form = await this.enrollForm(name, await this.consent(actor), clips);
    const enrolled = await this.call('enroll', `${this.origin}/api/v1/voices/enroll`, { method: 'POST', headers: actor.auth, body: form });
    expect(enrolled.status, await enrolled.clone().text()).toBe(201);
    return (await json(enrolled)).voice_id as string;
  }

  async setSynthesisConsent(actor: Actor, voiceId: string, status: 'active' | 'withdrawn'): Promise<void> {
    const response = await this.send('set consent', 'PUT', `${this.origin}/api/v1/voices/${voiceId}/consent`, { status }, actor.auth);
    expect(response.status).toBe(200);
  }

  async license(
    actor: Actor,
    voiceId: string,
    platformName: string,
    scopes = ['audiobook'],
  ): Promise<{ licenseId: string; token: string }> {
    const response = await this.send(
      'create licence',
      'POST',
      `${this.origin}/api/v1/voices/${voiceId}/licenses`,
      {
        platform_name: platformName,
        scopes,
        description: 'Narration of audiobook chapters for the tests',
        expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
      },
      actor.auth,
    );
    expect(response.status, await response.clone().text()).toBe(201);
    const body = await json(response);
    return { licenseId: body.license_id as string, token: body.license_token as string };
  }

  gate(apiKey: string, body: Record<string, unknown>): Promise<Response> {
    return this.send('gate', 'POST', `${this.edge}${GATE_PATH}`, body, { 'x-api-key': apiKey });
  }

  /** Polls the gate until it approves, then returns the approved answer. */
  async approval(apiKey: string, voiceId: string, platformName: string, intendedUse = 'audiobook'): Promise<Record<string, unknown>> {
    let answer: Record<string, unknown> = {};
    await eventually(async () => {
      const response = await this.gate(apiKey, { voice_id: voiceId, platform_name: platformName, intended_use: intendedUse });
      answer = await json(response);
      return answer.status === 'approved';
    }, 10_000);
    return answer;
  }

  /** Audit entries the credential may see for one check, polled until `count` are there. */
  async auditEntries(headers: Record<string, string>, query: string): Promise<Record<string, unknown>[]> {
    const response = await this.call('audit', `${this.origin}/api/v1/protect/audit-log?${query}`, { headers });
    expect(response.status).toBe(200);
    return ((await json(response)).entries as Record<string, unknown>[]) ?? [];
  }

  async secrets(): Promise<{
    internal_secret: string;
    jwt_private_jwk: Record<string, string>;
    auth_token_private_jwk: Record<string, string>;
    checkpoint_private_jwk: Record<string, string>;
  }> {
    return JSON.parse(await readFile(join(this.service.dataDir, 'secrets.json'), 'utf8'));
  }

  stop(): Promise<number | null> {
    return this.service.stop();
  }
}

export async function loginAs(originUrl: string, email: string, password: string): Promise<Actor> {
  const response = await post(`${originUrl}/api/v1/auth/login`, { email, password });
  expect(response.status, await response.clone().text()).toBe(200);
  const body = await json(response);
  const accessToken = body.access_token as string;
  return {
    email,
    password,
    userId: body.user_id as string,
    accessToken,
    refreshToken: body.refresh_token as string,
    auth: { authorization: `Bearer ${accessToken}` },
  };
}

/**
 * Every refusal is RFC 9457 problem+json with a `code` (docs/CONTRACT.md#answers-to-the-specifications-gaps). Returns the body.
 * `status` may be one status or a list of acceptable ones.
 */
export async function expectProblem(
  response: Response,
  status: number | readonly number[],
  code?: string | readonly string[],
): Promise<Record<string, unknown>> {
  const text = await response.clone().text();
  const statuses = typeof status === 'number' ? [status] : status;
  expect(statuses, `${response.status}: ${text}`).toContain(response.status);
  expect(response.headers.get('content-type'), text).toContain('application/problem+json');
  const body = JSON.parse(text) as Record<string, unknown>;
  expect(body.status).toBe(response.status);
  expect(typeof body.code).toBe('string');
  expect(typeof body.type).toBe('string');
  expect(typeof body.title).toBe('string');
  if (code !== undefined) expect(typeof code === 'string' ? [code] : code, text).toContain(body.code);
  return body;
}

/** A local webhook receiver that records every request and answers with what `reply` says. */
export interface Receiver {
  url: string;
  requests: { method: string; url: string; headers: IncomingHttpHeaders; body: string }[];
  close: () => Promise<void>;
}

export async function startReceiver(
  reply: (request: { url: string }) => { status: number; headers?: Record<string, string> } = () => ({ status: 204 }),
): Promise<Receiver> {
  const requests: Receiver['requests'] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      requests.push({
        method: request.method ?? '',
        url: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const answer = reply({ url: request.url ?? '' });
      response.writeHead(answer.status, answer.headers ?? {});
      response.end();
    });
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((done) => server.close(() => done())),
  };
}
