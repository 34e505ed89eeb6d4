import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { limits, PROBLEM_CONTENT_TYPE, problemSchema } from '@vip/shared-schema';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestOrigin, type TestOrigin } from '../testing/origin.js';

/**
 * Refusals made before any route runs, by Node's HTTP parser or by the URL limit, over a real socket
 * (inject() bypasses the parser): each is problem+json with a code and a request id, never Fastify's
 * own JSON.
 */
let origin: TestOrigin;
let port: number;
beforeAll(async () => {
  origin = await startTestOrigin();
  await origin.app.listen({ port: 0, host: '127.0.0.1' });
  port = (origin.app.server.address() as AddressInfo).port;
});
afterAll(() => origin?.close());

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Sends `request` as is and reads the answer until the server closes the connection. */
function sendRaw(request: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(request));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const [head = '', body = ''] = text.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

function expectTransportProblem(answer: RawAnswer, status: number, code: string) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  const problem = problemSchema.parse(JSON.parse(answer.body));
  expect(problem).toMatchObject({ status, code, type: `urn:vip:problem:${code}` });
  expect(problem.request_id).toBe(answer.headers['x-request-id']);
  return problem;
}

describe('problem+json for what the HTTP layer refuses', () => {
  it('431 headers_too_large for a 100 KB query string, with the connection closed', async () => {
    const answer = await sendRaw(`GET /healthz?q=${'a'.repeat(100_000)} HTTP/1.1\r\nhost: localhost\r\n\r\n`);
    expectTransportProblem(answer, 431, 'headers_too_large');
    expect(answer.headers.connection).toBe('close');
  });

  it('431 headers_too_large for one header too large', async () => {
    const answer = await sendRaw(`GET /healthz HTTP/1.1\r\nhost: localhost\r\nx-filler: ${'b'.repeat(20_000)}\r\n\r\n`);
    expectTransportProblem(answer, 431, 'headers_too_large');
  });

  it('414 uri_too_long for a URL over the limit the parser still accepts, without echoing it', async () => {
    const path = `/healthz?secret=${'c'.repeat(limits.urlMaxBytes)}`;
    const answer = await sendRaw(`GET ${path} HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n`);
    const problem = expectTransportProblem(answer, 414, 'uri_too_long');
    expect(answer.body).not.toContain('secret');
    expect(problem.instance).toBe('/healthz');
  });

  it('400 malformed_request for a request line that is not HTTP', async () => {
    expectTransportProblem(await sendRaw('HELLO THERE\r\n\r\n'), 400, 'malformed_request');
    expectTransportProblem(await sendRaw('GET / HTTP/1.1\r\nhost: localhost\r\nbad header\r\n\r\n'), 400, 'malformed_request');
  });

  it('logs each refusal the parser makes, without the request', async () => {
    origin.logs.length = 0;
    const answer = await sendRaw(`GET /healthz?q=secret-${'d'.repeat(100_000)} HTTP/1.1\r\nhost: localhost\r\n\r\n`);
    const lines = origin.logs.map((line) => JSON.parse(line));
    expect(lines).toContainEqual(expect.objectContaining({ request_id: answer.headers['x-request-id'], status: 431 }));
    expect(origin.logs.join('')).not.toContain('secret-');
  });
});
