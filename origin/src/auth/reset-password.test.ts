import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pathOf } from '@vip/shared-schema';
import { loginRoute, refreshRoute, registerRoute } from '@vip/shared-schema/routes/origin/auth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../db/client.js';
import { systemRuntime } from '../runtime.js';
import { fastHasher, PASSWORD, startTestOrigin, type TestOrigin, uniqueEmail } from '../testing/origin.js';
import { scryptHasher } from './passwords.js';
import { resetPassword } from './reset-password.js';
import { findUserByEmail, insertUser } from './store.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const NEW_PASSWORD = 'an operator-chosen password';

let origin: TestOrigin;
const hasher = fastHasher();
beforeAll(async () => {
  origin = await startTestOrigin({ hasher });
});
afterAll(() => origin?.close());

const post = (url: string, payload: Record<string, unknown>) => origin.app.inject({ method: 'POST', url, payload });
const login = (email: string, password: string) => post(pathOf(loginRoute), { email, password });

/** Runs the reset in this process against the test origin's database, collecting what it prints. */
async function reset(argv: string[], stdin = '') {
  const out: string[] = [];
  const err: string[] = [];
  const code = await resetPassword(
    argv,
    { db: origin.database.db, hasher, runtime: origin.runtime },
    { readStdin: async () => stdin, out: (line) => out.push(line), err: (line) => err.push(line) },
  );
  return { code, out: out.join('\n'), err: err.join('\n') };
}

describe('the operator password reset', () => {
  it('sets the password read from stdin, ends every session of the account, and the new password signs in over HTTP', async () => {
    const email = uniqueEmail();
    expect((await post(pathOf(registerRoute), { email, password: PASSWORD })).statusCode).toBe(201);
    const session = (await login(email, PASSWORD)).json() as { refresh_token: string };

    const result = await reset(['--email', email.toUpperCase(), '--password-stdin'], `${NEW_PASSWORD}\n`);
    expect(result).toMatchObject({ code: 0, err: '' });
    expect(result.out).toContain(`password of ${email} (owner) reset`);
    expect(result.out).not.toContain(NEW_PASSWORD);

    expect((await login(email, PASSWORD)).statusCode).toBe(401);
    expect((await login(email, NEW_PASSWORD)).statusCode).toBe(200);
    const refreshed = await post(pathOf(refreshRoute), { refresh_token: session.refresh_token });
    expect(refreshed.statusCode).toBe(401);
  });

  it('generates a password and prints it once when none is given', async () => {
    const email = uniqueEmail();
    expect((await post(pathOf(registerRoute), { email, password: PASSWORD })).statusCode).toBe(201);
    const result = await reset(['--email', email]);
    expect(result.code).toBe(0);
    const generated = /new password \(shown once\): (\S+)$/.exec(result.out)?.[1];
    expect(generated).toMatch(/^[\w-]{24}$/);
    expect((await login(email, generated!)).statusCode).toBe(200);
  });

  it('lets a locked-out account sign in at once after the reset', async () => {
    const email = uniqueEmail();
    expect((await post(pathOf(registerRoute), { email, password: PASSWORD })).statusCode).toBe(201);
    let status = 0;
    for (let attempt = 0; attempt < 50 && status !== 429; attempt++) status = (await login(email, 'a wrong password')).statusCode;
    expect(status).toBe(429);
    expect((await reset(['--email', email, '--password-stdin'], NEW_PASSWORD)).code).toBe(0);
    expect((await login(email, NEW_PASSWORD)).statusCode).toBe(200);
  });

  it('refuses an unknown account, a missing email, a password under the policy and an unknown option', async () => {
    expect(await reset(['--email', uniqueEmail()])).toMatchObject({ code: 1, err: expect.stringContaining('no account with the email') });
    expect(await reset([])).toMatchObject({ code: 2, err: expect.stringContaining('usage: npm run account:reset-password') });
    const short = await reset(['--email', uniqueEmail(), '--password-stdin'], 'short');
    expect(short).toMatchObject({ code: 2, err: expect.stringContaining('password') });
    expect(await reset(['--email', uniqueEmail(), '--force'])).toMatchObject({ code: 2, err: expect.stringContaining('--force') });
  });
});

describe('npm run account:reset-password', () => {
  it('resets the password in the configured database (the embedded one in DATA_DIR)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'vip-reset-'));
    try {
      const email = uniqueEmail();
      const setup = await openPglite(join(dataDir, 'pglite'));
      await setup.migrate();
      await insertUser(setup.db, {
        id: systemRuntime.newId(),
        email,
        passwordHash: await hasher.hash(PASSWORD),
        role: 'owner',
        createdAt: new Date(),
      });
      await setup.close();

      const child = spawn('npm', ['run', '--silent', 'account:reset-password', '--', '--email', email, '--password-stdin'], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stderr.on('data', (chunk: Buffer) => {
        output += chunk.toString();
      });
      child.stdin.end(`${NEW_PASSWORD}\n`);
      const code = await new Promise<number | null>((done) => child.once('exit', done));
      expect(code, output).toBe(0);
      expect(output).toContain(`password of ${email} (owner) reset`);

      const after = await openPglite(join(dataDir, 'pglite'));
      const user = await findUserByEmail(after.db, email);
      await after.close();
      expect(await scryptHasher().verify(NEW_PASSWORD, user!.passwordHash)).toBe(true);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 240_000);
});
