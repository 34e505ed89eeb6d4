import type { IncomingMessage } from 'node:http';
import { INTERNAL_HEADERS, type InternalVerdict, verifyInternalRequest } from '@vip/shared-schema';

/** Reads a request a fake edge received and checks its internal signature as the real edge does. */
export async function readSignedRequest(request: IncomingMessage, secret: string): Promise<{ body: string; verdict: InternalVerdict }> {
  let body = '';
  for await (const chunk of request) body += chunk;
  const verdict = await verifyInternalRequest(
    secret,
    request.method ?? '',
    request.url ?? '',
    body,
    {
      timestamp: request.headers[INTERNAL_HEADERS.timestamp] as string | undefined,
      signature: request.headers[INTERNAL_HEADERS.signature] as string | undefined,
    },
    Date.now() / 1000,
  );
  return { body, verdict };
}
