import { createApp } from './app.js';
import type { Env } from './env.js';
import { systemRuntime } from './runtime.js';

export { AuditOutbox } from './objects/AuditOutbox.js';
export { RateLimiter } from './objects/RateLimiter.js';
export { VoiceGate } from './objects/VoiceGate.js';

const app = createApp(systemRuntime);

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
