import { createApp } from './app.js';
import { systemRuntime } from './runtime.js';

export { CallerHome } from './objects/caller-home.js';
export { RateLimiter } from './objects/rate-limiter.js';
export { VoiceGate } from './objects/voice-gate.js';

const app = createApp(systemRuntime);

export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
