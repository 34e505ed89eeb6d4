import { hmacSha256, timingSafeEqual, toHex } from './canonical.js';
import { limits } from './limits.js';

/**
 * Origin <-> edge internal calls (docs/ARCHITECTURE.md#consistency): an HMAC-SHA256 over the timestamp, method,
 * path and body with the shared internal secret. The timestamp window bounds replays; every
 * payload sent this way is idempotent (versioned index updates, audit entries keyed by check_id),
 * so a replay inside the window changes nothing.
 */
export const INTERNAL_HEADERS = { timestamp: 'x-vip-timestamp', signature: 'x-vip-signature' } as const;

const signedString = (timestamp: string, method: string, path: string, body: string) =>
  `${timestamp}.${method.toUpperCase()}.${path}.${body}`;

export async function signInternalRequest(
  secret: string,
  method: string,
  path: string,
  body: string,
  nowSeconds: number,
): Promise<Record<string, string>> {
  const timestamp = String(Math.floor(nowSeconds));
  const signature = toHex(await hmacSha256(secret, signedString(timestamp, method, path, body)));
  return { [INTERNAL_HEADERS.timestamp]: timestamp, [INTERNAL_HEADERS.signature]: `v1=${signature}` };
}

export type InternalVerdict = 'ok' | 'missing' | 'stale' | 'bad_signature';

export async function verifyInternalRequest(
  secret: string,
  method: string,
  path: string,
  body: string,
  headers: { timestamp: string | null | undefined; signature: string | null | undefined },
  nowSeconds: number,
): Promise<InternalVerdict> {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature) return 'missing';
  if (!/^\d{1,12}$/.test(timestamp)) return 'bad_signature';
  if (Math.abs(nowSeconds - Number(timestamp)) > limits.internalRequestMaxSkewSeconds) return 'stale';
  const expected = `v1=${toHex(await hmacSha256(secret, signedString(timestamp, method, path, body)))}`;
  return timingSafeEqual(expected, signature) ? 'ok' : 'bad_signature';
}
