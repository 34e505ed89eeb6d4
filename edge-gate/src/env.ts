import type { AuditOutbox } from './objects/AuditOutbox.js';
import type { RateLimiter } from './objects/RateLimiter.js';
import type { VoiceGate } from './objects/VoiceGate.js';

/** Bindings of the Worker (wrangler.toml). Settings are strings here; config.ts gives them types. */
export interface Env {
  EDGE_INDEX: KVNamespace;
  VOICE_GATE: DurableObjectNamespace<VoiceGate>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  AUDIT_OUTBOX: DurableObjectNamespace<AuditOutbox>;
  [setting: string]: unknown;
}
