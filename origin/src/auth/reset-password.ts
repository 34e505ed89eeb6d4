import { parseArgs } from 'node:util';
import { registerRequestSchema } from '@vip/shared-schema';
import type { Database } from '../db/client.js';
import type { Runtime } from '../runtime.js';
import type { PasswordHasher } from './passwords.js';
import * as store from './store.js';

export interface ResetPasswordIo {
  /** The new password when `--password-stdin` is given: read from standard input, so it is in no shell history. */
  readStdin: () => Promise<string>;
  out: (line: string) => void;
  err: (line: string) => void;
}

export interface ResetPasswordDeps {
  db: Database;
  hasher: PasswordHasher;
  runtime: Runtime;
}

const USAGE = 'usage: npm run account:reset-password -- --email <address> [--password-stdin]';

/**
 * The operator's reset of any account's password (docs/OPERATIONS.md, "Account recovery"): the
 * account gets the password read from standard input, or a generated one printed once; every
 * session of the account ends and its failed-login count is cleared. Answers the exit code.
 */
export async function resetPassword(argv: readonly string[], deps: ResetPasswordDeps, io: ResetPasswordIo): Promise<number> {
  let values: { email?: string; 'password-stdin'?: boolean };
  try {
    ({ values } = parseArgs({ args: [...argv], options: { email: { type: 'string' }, 'password-stdin': { type: 'boolean' } } }));
  } catch (error) {
    io.err(`${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  const generated = !values['password-stdin'];
  const password = generated
    ? Buffer.from(deps.runtime.randomBytes(18)).toString('base64url')
    : (await io.readStdin()).replace(/\r?\n$/, '');
  // The same rules as registration: a valid address (compared in lower case) and the password policy.
  const parsed = registerRequestSchema.safeParse({ email: values.email, password });
  if (!parsed.success) {
    io.err(`${parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ')}\n${USAGE}`);
    return 2;
  }
  const user = await store.findUserByEmail(deps.db, parsed.data.email);
  if (!user) {
    io.err(`no account with the email ${parsed.data.email}`);
    return 1;
  }
  await store.replacePassword(deps.db, user.id, await deps.hasher.hash(parsed.data.password), deps.runtime.clock.now());
  await store.clearLoginFailures(deps.db, `account:${user.email}`);
  io.out(`password of ${user.email} (${user.role}) reset; every session of the account has ended`);
  if (generated) io.out(`new password (shown once): ${password}`);
  return 0;
}
