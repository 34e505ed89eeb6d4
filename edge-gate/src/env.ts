import type { AuditOutbox } from './objects/audit-outbox.js';
import type { RateLimiter } from './objects/rate-limiter.js';
import type { VoiceGate } from './objects/voice-gate.js';

/** Bindings of the Worker (wrangler.toml). Settings are strings here; config.ts gives them types. */
export interface Env {
  EDGE_INDEX: KVNamespace;
  VOICE_GATE: DurableObjectNamespace<VoiceGate>;
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  AUDIT_OUTBOX: DurableObjectNamespace<AuditOutbox>;
  [setting: string]: unknown;
}
