import type { Database } from '../db/client.js';
import type { Runtime } from '../runtime.js';
import type { AuthService } from './service.js';
import { findUserByEmail, setUserRole } from './store.js';

export type AdminBootstrap =
  | { outcome: 'existing' | 'promoted' | 'created' }
  | { outcome: 'created_with_generated_password'; password: string };

/**
 * Makes sure the configured admin account exists. An existing account keeps its password (the
 * setting is only a first password) but is made admin, since the operator named it.
 */
export async function ensureAdmin(
  auth: AuthService,
  db: Database,
  runtime: Runtime,
  admin: { email: string; password: string | null },
): Promise<AdminBootstrap> {
  const existing = await findUserByEmail(db, admin.email);
  if (existing) {
    if (existing.role === 'admin') return { outcome: 'existing' };
    await setUserRole(db, existing.id, 'admin');
    return { outcome: 'promoted' };
  }
  const password = admin.password ?? Buffer.from(runtime.randomBytes(24)).toString('base64url');
  // Another replica starting at the same moment may win the insert; its admin is as good as ours.
  const created = await auth.createUser(admin.email, password, 'admin');
  if (!created) return { outcome: 'existing' };
  return admin.password ? { outcome: 'created' } : { outcome: 'created_with_generated_password', password };
}
