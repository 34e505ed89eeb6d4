import { auditCaller, sha256Hex } from '@vip/shared-schema';
import { actorOf, type Caller, credentialOf } from '../auth/index.js';
import type { RateLimiter } from '../http/rate-limit.js';

/** Who asks a public provenance route: a platform key or an account, or nobody (a client IP). */
export type PublicCaller = Caller | { kind: 'anonymous'; ip: string };

/** A public route's limit, before the upload is read: per client IP without credentials, per key or account with. */
export async function admitPublicCaller(
  limiter: RateLimiter,
  name: string,
  caller: PublicCaller,
  perMinute: { anonymous: number; perCredential: number },
): Promise<void> {
  if (caller.kind === 'anonymous') await limiter.take({ name, callsPerMinute: perMinute.anonymous }, `ip:${caller.ip}`);
  else await limiter.take({ name, callsPerMinute: perMinute.perCredential }, credentialOf(caller));
}

/** Who asked, as an audit entry names a caller: the key or user id, or a hash of an anonymous caller's IP. */
export async function auditedPublicCaller(caller: PublicCaller) {
  return auditCaller(
    caller.kind === 'anonymous' ? { type: 'anonymous', addressHash: (await sha256Hex(`ip:${caller.ip}`)).slice(0, 32) } : actorOf(caller),
  );
}
