import { limits, ProblemError, sha256Hex, type UserRole } from '@vip/shared-schema';
import { loginRoute } from '@vip/shared-schema/routes/origin/auth';
import type { Database } from '../db/client.js';
import type { UserRow } from '../db/schema.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { Runtime } from '../runtime.js';
import type { AccessTokens } from './access-tokens.js';
import { BoundedLane } from './hashing-lane.js';
import type { PasswordHasher } from './passwords.js';
import * as store from './store.js';

export interface Session {
  access_token: string;
  token_type: 'bearer';
  user_id: string;
  email: string;
  refresh_token: string;
  expires_in: number;
}

export interface AuthServiceDeps {
  db: Database;
  hasher: PasswordHasher;
  tokens: AccessTokens;
  runtime: Runtime;
  limiter: RateLimiter;
  /** Registrations per client address per minute (REGISTRATIONS_PER_MINUTE). */
  registrationsPerMinute: number;
}

/**
 * Registrations hash their passwords one at a time in each origin process, with this many waiting
 * (about 1.6 s of scrypt at the production cost); more answer 503 with Retry-After. The other
 * threads of libuv's pool stay free for logins, however many addresses the registrations come from.
 */
export const REGISTRATION_HASHING = { concurrency: 1, maxWaiting: 16 } as const;

type RefreshOutcome = { kind: 'rotated'; user: UserRow; refreshToken: string } | { kind: 'invalid' } | { kind: 'reused' };

export class AuthService {
  private readonly registrationHashing = new BoundedLane(REGISTRATION_HASHING.concurrency, REGISTRATION_HASHING.maxWaiting);

  constructor(private readonly deps: AuthServiceDeps) {}

  /**
   * The limit per client address, before the password is hashed (each registration costs a scrypt
   * hash). The RateLimit headers to answer with.
   */
  admitRegistration(clientIp: string): Promise<Record<string, string>> {
    return this.deps.limiter.take({ name: 'registration', callsPerMinute: this.deps.registrationsPerMinute }, `ip:${clientIp}`);
  }

  /** Call after admitRegistration. */
  async register(email: string, password: string): Promise<{ user_id: string; email: string }> {
    const passwordHash = await this.registrationHashing.run(
      () => this.deps.hasher.hash(password),
      () =>
        new ProblemError('unavailable', 'Too many registrations are being processed; try again in a moment.', {
          headers: { 'retry-after': '1' },
        }),
    );
    const user = await this.insertUser(email, passwordHash, 'owner');
    if (!user) throw new ProblemError('email_taken', 'An account with this email exists.');
    return { user_id: user.id, email: user.email };
  }

  /** Creates the account unless the email is taken (null then): the start-up bootstrap's and the tests' way in. */
  async createUser(email: string, password: string, role: UserRole): Promise<UserRow | null> {
    return this.insertUser(email, await this.deps.hasher.hash(password), role);
  }

  private insertUser(email: string, passwordHash: string, role: UserRole): Promise<UserRow | null> {
    const { db, runtime } = this.deps;
    return store.insertUser(db, { id: runtime.newId(), email, passwordHash, role, createdAt: runtime.clock.now() });
  }

  /**
   * Unknown emails cost one scrypt verify too, against a dummy hash, so the answer time does not
   * tell whether an account exists. Failures count per account and per client address.
   */
  async login(email: string, password: string, clientIp: string): Promise<Session> {
    const { db, hasher, runtime } = this.deps;
    const now = runtime.clock.now();
    const windowStart = new Date(now.getTime() - limits.loginWindowSeconds * 1000);
    const subjects = { account: `account:${email}`, ip: `ip:${clientIp}` };
    await this.refuseWhenRateLimited(subjects, now, windowStart);

    const user = await store.findUserByEmail(db, email);
    const passwordMatches = await hasher.verify(password, user?.passwordHash ?? (await hasher.dummyHash()));
    if (!user || !passwordMatches) {
      await store.recordLoginFailure(db, [subjects.account, subjects.ip], now, windowStart);
      throw new ProblemError('invalid_credentials', 'Email or password is wrong.');
    }
    await store.clearLoginFailures(db, subjects.account);
    return this.openSession(user, runtime.newId());
  }

  /** Rotates on every use; a spent token presented again revokes every token of its family. */
  async refresh(refreshToken: string): Promise<Session> {
    const { db, runtime } = this.deps;
    const now = runtime.clock.now();
    const tokenHash = await sha256Hex(refreshToken);
    const nextToken = this.newRefreshToken();
    const nextHash = await sha256Hex(nextToken);
    // Outcomes are returned, not thrown, so that a family revocation commits.
    const outcome = await db.transaction(async (tx): Promise<RefreshOutcome> => {
      const row = await store.findRefreshTokenByHash(tx, tokenHash);
      if (!row) return { kind: 'invalid' };
      if (row.usedAt) {
        await store.revokeRefreshFamily(tx, row.familyId, now);
        return { kind: 'reused' };
      }
      if (row.revokedAt || row.expiresAt <= now) return { kind: 'invalid' };
      if (!(await store.markRefreshTokenUsed(tx, row.id, now))) {
        await store.revokeRefreshFamily(tx, row.familyId, now);
        return { kind: 'reused' };
      }
      const user = await store.findUserById(tx, row.userId);
      if (!user) return { kind: 'invalid' };
      await store.insertRefreshToken(tx, this.refreshRow(user.id, row.familyId, nextHash, now));
      return { kind: 'rotated', user, refreshToken: nextToken };
    });
    if (outcome.kind === 'reused') {
      throw new ProblemError('refresh_token_reused', 'This refresh token was already used; its session is revoked. Log in again.');
    }
    if (outcome.kind === 'invalid')
      throw new ProblemError('invalid_token', `The refresh token is invalid or expired: sign in again with POST ${loginRoute.path}.`);
    return this.session(outcome.user, outcome.refreshToken);
  }

  /** Revokes the token's family; a token that is unknown, spent or already revoked changes nothing and answers the same. */
  async logout(refreshToken: string): Promise<{ signed_out: true }> {
    const { db, runtime } = this.deps;
    const row = await store.findRefreshTokenByHash(db, await sha256Hex(refreshToken));
    if (row) await store.revokeRefreshFamily(db, row.familyId, runtime.clock.now());
    return { signed_out: true };
  }

  /**
   * Checks the current password (failures count like failed logins, per account and address),
   * stores the new one, ends every session of the account (a thief's included) and opens a new one.
   */
  async changePassword(userId: string, currentPassword: string, newPassword: string, clientIp: string): Promise<Session> {
    const { db, hasher, runtime } = this.deps;
    const user = await store.findUserById(db, userId);
    if (!user) throw new ProblemError('invalid_token', 'The account of this token no longer exists.');
    const now = runtime.clock.now();
    const windowStart = new Date(now.getTime() - limits.loginWindowSeconds * 1000);
    const subjects = { account: `account:${user.email}`, ip: `ip:${clientIp}` };
    await this.refuseWhenRateLimited(subjects, now, windowStart);
    if (!(await hasher.verify(currentPassword, user.passwordHash))) {
      await store.recordLoginFailure(db, [subjects.account, subjects.ip], now, windowStart);
      throw new ProblemError('invalid_credentials', 'The current password is wrong.');
    }
    await store.replacePassword(db, user.id, await hasher.hash(newPassword), now);
    return this.openSession(user, runtime.newId());
  }

  private async refuseWhenRateLimited(subjects: { account: string; ip: string }, now: Date, windowStart: Date): Promise<void> {
    const windows = await store.countLoginFailures(this.deps.db, [subjects.account, subjects.ip], windowStart);
    const allowed: Record<string, number> = {
      [subjects.account]: limits.loginAttemptsPerAccount,
      [subjects.ip]: limits.loginAttemptsPerIp,
    };
    const exceeded = windows.filter((w) => w.failures >= (allowed[w.subject] ?? 0) && w.oldest);
    if (exceeded.length === 0) return;
    const freeAt = Math.max(...exceeded.map((w) => w.oldest!.getTime() + limits.loginWindowSeconds * 1000));
    const retryAfter = Math.max(1, Math.ceil((freeAt - now.getTime()) / 1000));
    throw new ProblemError('rate_limited', 'Too many failed logins; try again later.', { headers: { 'retry-after': String(retryAfter) } });
  }

  private async openSession(user: UserRow, familyId: string): Promise<Session> {
    const now = this.deps.runtime.clock.now();
    const refreshToken = this.newRefreshToken();
    await store.insertRefreshToken(this.deps.db, this.refreshRow(user.id, familyId, await sha256Hex(refreshToken), now));
    return this.session(user, refreshToken);
  }

  private async session(user: UserRow, refreshToken: string): Promise<Session> {
    const { tokens, runtime } = this.deps;
    const accessToken = await tokens.issue({ userId: user.id, role: user.role }, runtime.clock.now(), runtime.newId());
    return {
      access_token: accessToken,
      token_type: 'bearer',
      user_id: user.id,
      email: user.email,
      refresh_token: refreshToken,
      expires_in: limits.accessTokenTtlSeconds,
    };
  }

  private newRefreshToken(): string {
    return Buffer.from(this.deps.runtime.randomBytes(32)).toString('base64url');
  }

  private refreshRow(userId: string, familyId: string, tokenHash: string, now: Date) {
    return {
      id: this.deps.runtime.newId(),
      familyId,
      userId,
      tokenHash,
      createdAt: now,
      expiresAt: new Date(now.getTime() + limits.refreshTokenTtlSeconds * 1000),
    };
  }
}
