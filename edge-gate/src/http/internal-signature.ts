import { INTERNAL_HEADERS, ProblemError, verifyInternalRequest } from '@vip/shared-schema';
import type { AppContext } from './context.js';

const DETAIL = {
  missing: 'The request carries no internal signature.',
  stale: 'The request timestamp is outside the allowed clock skew.',
  bad_signature: 'The internal signature does not match.',
} as const;

/** Origin <-> edge calls are HMAC-signed over timestamp, method, path and the raw body. */
export async function requireInternalSignature(c: AppContext, rawBody: string): Promise<void> {
  const verdict = await verifyInternalRequest(
    c.get('config').internalSecret,
    c.req.method,
    c.req.path,
    rawBody,
    { timestamp: c.req.header(INTERNAL_HEADERS.timestamp), signature: c.req.header(INTERNAL_HEADERS.signature) },
    Math.floor(c.get('runtime').now() / 1000),
  );
  if (verdict !== 'ok') {
    // Worth an operator's eye: a misconfigured secret, a skewed clock, or someone probing.
    console.warn(JSON.stringify({ request_id: c.get('requestId'), event: 'internal_signature_refused', path: c.req.path, verdict }));
    throw new ProblemError('invalid_signature', DETAIL[verdict]);
  }
}
