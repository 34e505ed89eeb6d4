import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathOf } from '@vip/shared-schema';
import { enrollVoiceRoute } from '@vip/shared-schema/routes/origin/voices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, loggedIn } from '../testing/origin.js';
import { grantBiometricConsent, origin } from '../testing/voice-routes.js';
import { silentWav } from '../testing/voiceprint.js';

/**
 * An upload refused before or just after its form is read must leave the client's keep-alive
 * connection usable: the next request on it gets its answer, never a reset. Over a real socket,
 * with Node's keep-alive agent held to one connection, as a platform's client would be.
 */
let port: number;
let agent: Agent;
beforeAll(async () => {
  await origin.app.listen({ port: 0, host: '127.0.0.1' });
  port = (origin.app.server.address() as AddressInfo).port;
});
afterAll(() => agent?.destroy());

interface Answer {
  status: number;
  connection: string | undefined;
  /** Whether the request went over a connection an earlier request used. */
  reused: boolean;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string>, body?: Uint8Array): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const call = request({ host: '127.0.0.1', port, method, path, headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode!,
          connection: response.headers.connection,
          reused: call.reusedSocket,
          body: Buffer.concat(chunks).toString(),
        }),
      );
      response.on('error', reject);
    });
    call.on('error', reject);
    call.end(body);
  });
}

/** A multipart body as a client library would send it, parts in the order given. */
async function multipart(parts: Array<[string, string | Uint8Array]>): Promise<{ body: Uint8Array; type: string }> {
  const form = new FormData();
  for (const [name, value] of parts) {
    if (typeof value === 'string') form.append(name, value);
    else form.append(name, new Blob([value]), `${name}.wav`);
  }
  const encoded = new Response(form);
  return { body: new Uint8Array(await encoded.arrayBuffer()), type: encoded.headers.get('content-type')! };
}

describe('an upload refused early keeps the connection usable', () => {
  it('answers the next request on the same keep-alive connection after a 422 for an extra field and a 403 consent_required', async () => {
    const owner = await loggedIn(origin);
    const consentId = await grantBiometricConsent(owner);
    // Two megabytes of audio: most of it is still unread when an early field is refused.
    const audio = silentWav(60);
    const refusals: Array<[Array<[string, string | Uint8Array]>, number, string]> = [
      [
        [
          ['colour', 'blue'],
          ['name', 'Extra'],
          ['consent_id', consentId],
          ['audio', audio],
        ],
        422,
        'validation_failed',
      ],
      [
        [
          ['name', 'Not mine'],
          ['consent_id', crypto.randomUUID()],
          ['audio', audio],
        ],
        403,
        'consent_required',
      ],
    ];
    for (let round = 0; round < 4; round++) {
      for (const [parts, status, code] of refusals) {
        agent = new Agent({ keepAlive: true, maxSockets: 1 });
        const { body, type } = await multipart(parts);
        const refused = await send('POST', pathOf(enrollVoiceRoute), { ...bearer(owner.accessToken), 'content-type': type }, body);
        expect(refused.status).toBe(status);
        expect(JSON.parse(refused.body).code).toBe(code);
        expect(refused.connection).toBe('keep-alive');
        const next = await send('GET', '/healthz', {});
        expect(next).toMatchObject({ status: 200, reused: true });
        agent.destroy();
      }
    }
  });
});
