import { type AuthorizationTokenClaims, canonicalJson, timingSafeEqual, toHex } from '@vip/shared-schema';

/**
 * A desk's seal on the tokens it issues (docs/DECISIONS.md#approvals-a-seal-instead-of-a-row): a token's
 * `jti` is a version 8 UUID that carries the desk's serial number for the token and an HMAC, under a
 * key that never leaves the desk, of that serial and everything the token grants. The desk therefore
 * stores nothing per token when it approves, and still redeems only tokens it issued: a token signed
 * with the Worker's key but not sealed by the desk (a leaked signing key) matches no seal.
 */

/** What a seal covers: the token's grant, who may redeem it, and the licence it was approved under. */
export type SealedGrant = Omit<AuthorizationTokenClaims, 'iss' | 'jti'> & { license_id: string };

/** Serial numbers take the UUID's first 5 bytes: 2^40 tokens per desk. */
const SERIAL_BYTES = 5;
export const MAX_SERIAL = 2 ** (8 * SERIAL_BYTES) - 1;
/** The rest holds 82 bits of the HMAC: its first 11 bytes less the 6 bits the version and variant take. */
const VERSION_8 = 0x80;
const VARIANT_RFC_9562 = 0x80;

const encoder = new TextEncoder();

/** A fresh key for a desk's seals, as its storage keeps it. */
export const newSealKey = (): Uint8Array => crypto.getRandomValues(new Uint8Array(32));

export const importSealKey = (raw: Uint8Array): Promise<CryptoKey> =>
  crypto.subtle.importKey('raw', raw as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);

/** The `jti` that seals `serial` and `grant` under `key`. */
export async function seal(key: CryptoKey, serial: number, grant: SealedGrant): Promise<string> {
  const message = encoder.encode(canonicalJson({ serial, ...grant }));
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  const bytes = new Uint8Array(16);
  for (let i = SERIAL_BYTES - 1, rest = serial; i >= 0; i--, rest = Math.floor(rest / 256)) bytes[i] = rest % 256;
  bytes[5] = mac[0]!;
  bytes[6] = VERSION_8 | (mac[1]! & 0x0f);
  bytes[7] = mac[2]!;
  bytes[8] = VARIANT_RFC_9562 | (mac[3]! & 0x3f);
  bytes.set(mac.subarray(4, 11), 9);
  const hex = toHex(bytes);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The serial a `jti` names, or null when it is no seal (not a version 8 UUID). */
export function serialOf(jti: string): number | null {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(jti)) return null;
  return Number.parseInt(jti.slice(0, 8) + jti.slice(9, 11), 16);
}

/** Whether `jti` is this key's seal on `grant`; compared without an early exit. */
export async function isSealOf(key: CryptoKey, jti: string, grant: SealedGrant): Promise<boolean> {
  const serial = serialOf(jti);
  return serial !== null && timingSafeEqual(await seal(key, serial, grant), jti);
}
