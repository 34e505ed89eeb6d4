import { createOriginClient, ProblemError } from '@vip/shared-schema/client';

/**
 * Where the console keeps its credentials, and why (docs/CONSOLE.md):
 * - the access token (15 minutes) lives only in this module's memory: no storage API can hand it to
 *   anything else, and a reload simply asks for a new one;
 * - the refresh token lives in sessionStorage: it survives a reload of this tab and goes when the
 *   tab closes, never reaches another tab or site, and is rotated on every use (a stolen, already
 *   spent copy revokes the whole family at the origin).
 * No cookie is ever set, so the browser attaches no credential by itself and a cross-site request
 * cannot act for the owner (no CSRF by construction).
 */

const REFRESH_KEY = 'vip-console.refresh-token';
/** Refresh this long before the access token expires, so a request never leaves with a dying token. */
const REFRESH_MARGIN_MS = 60_000;

interface Tokens {
  accessToken: string;
  expiresAt: number;
  userId: string;
  /** Every issued session names its account's email, so the console can say who is signed in after a reload too. */
  email: string;
}

let tokens: Tokens | null = null;
let refreshing: Promise<string> | null = null;
let onEnded: (why: string) => void = () => {};

const anonymous = createOriginClient({ baseUrl: location.origin });

interface Issued {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  user_id: string;
  email: string;
}

function keep(issued: Issued): void {
  tokens = {
    accessToken: issued.access_token,
    expiresAt: Date.now() + issued.expires_in * 1000,
    userId: issued.user_id,
    email: issued.email,
  };
  sessionStorage.setItem(REFRESH_KEY, issued.refresh_token);
}

/** Called once: what to do when the session ends on its own (refresh refused or expired). */
export function whenSessionEnds(callback: (why: string) => void): void {
  onEnded = callback;
}

export const signedIn = (): boolean => tokens !== null;
export const currentUserId = (): string | null => tokens?.userId ?? null;
export const currentEmail = (): string | null => tokens?.email ?? null;

export async function signIn(email: string, password: string): Promise<void> {
  keep(await anonymous.auth.login({ email, password }));
}

export async function signUp(email: string, password: string): Promise<void> {
  await anonymous.auth.register({ email, password });
  await signIn(email, password);
}

function forget(): void {
  tokens = null;
  refreshing = null;
  sessionStorage.removeItem(REFRESH_KEY);
}

/** Revokes the session at the origin (its refresh token family), then forgets both tokens; offline, it still forgets them. */
export async function signOut(): Promise<void> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  forget();
  if (refreshToken) await anonymous.auth.logout(refreshToken).catch(() => undefined);
}

/** Every other session of the account ends; this tab carries on with the new one the origin returns. */
export async function changePassword(currentPassword: string, newPassword: string): Promise<void> {
  keep(await api.auth.changePassword({ current_password: currentPassword, new_password: newPassword }));
}

async function refresh(): Promise<string> {
  const refreshToken = sessionStorage.getItem(REFRESH_KEY);
  if (!refreshToken) throw new SessionEnded('You are signed out.');
  try {
    keep(await anonymous.auth.refresh(refreshToken));
    return tokens!.accessToken;
  } catch (error) {
    if (error instanceof ProblemError && error.status === 401) {
      forget();
      const why =
        error.code === 'refresh_token_reused'
          ? 'Your session was ended because its refresh token was used twice (another tab, or a copy). Sign in again.'
          : 'Your session has expired. Sign in again.';
      onEnded(why);
      throw new SessionEnded(why);
    }
    throw error;
  }
}

/** A valid access token, refreshed first when it is about to expire; one refresh at a time. */
export async function accessToken(): Promise<string> {
  if (tokens && tokens.expiresAt - Date.now() > REFRESH_MARGIN_MS) return tokens.accessToken;
  refreshing ??= refresh().finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** After a reload: resumes the tab's session from its refresh token, if it has one. */
export async function resume(): Promise<boolean> {
  if (!sessionStorage.getItem(REFRESH_KEY)) return false;
  try {
    await accessToken();
    return true;
  } catch {
    return false;
  }
}

export class SessionEnded extends Error {}

/** The origin's typed client, authenticated with this tab's session. */
export const api = createOriginClient({ baseUrl: location.origin, bearerToken: accessToken });
