import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startTestOrigin, type TestOrigin, uniqueEmail } from '../testing/origin.js';
import { ensureAdmin } from './bootstrap.js';
import { findUserByEmail } from './store.js';

let origin: TestOrigin;
beforeAll(async () => {
  origin = await startTestOrigin();
});
afterAll(() => origin?.close());

const bootstrap = (email: string, password: string | null) =>
  ensureAdmin(origin.auth, origin.database.db, origin.runtime, { email, password });

describe('admin bootstrap', () => {
  it('creates the admin with the configured password, once', async () => {
    const email = uniqueEmail('admin');
    expect(await bootstrap(email, PASSWORD)).toEqual({ outcome: 'created' });
    expect(await bootstrap(email, 'another password entirely')).toEqual({ outcome: 'existing' });
    const session = await origin.auth.login(email, PASSWORD, '192.0.2.10');
    expect(session.token_type).toBe('bearer');
    expect((await findUserByEmail(origin.database.db, email))?.role).toBe('admin');
  });

  it('generates a strong password when none is configured and hands it back to be shown once', async () => {
    const email = uniqueEmail('admin');
    const result = await bootstrap(email, null);
    if (result.outcome !== 'created_with_generated_password') throw new Error(`unexpected ${result.outcome}`);
    expect(result.password.length).toBeGreaterThanOrEqual(32);
    await expect(origin.auth.login(email, result.password, '192.0.2.11')).resolves.toMatchObject({ token_type: 'bearer' });
  });

  it('promotes an existing owner named as the admin, keeping the password', async () => {
    const email = uniqueEmail('owner');
    await origin.auth.register(email, PASSWORD);
    expect(await bootstrap(email, null)).toEqual({ outcome: 'promoted' });
    expect((await findUserByEmail(origin.database.db, email))?.role).toBe('admin');
  });
});
