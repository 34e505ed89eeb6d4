import type { Context } from 'hono';
import type { Caller } from '../auth/caller.js';
import type { EdgeConfig } from '../config.js';
import type { Runtime } from '../runtime.js';

/** What every handler can read from the Hono context. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    config: EdgeConfig;
    runtime: Runtime;
    caller: Caller;
  };
}

export type AppContext = Context<AppEnv>;
