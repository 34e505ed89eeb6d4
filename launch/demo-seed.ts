/**
 * The demo registry `npm run seed` (scripts/seed.ts) and `npm start -- --demo` make: what it holds,
 * how it is found again on a second run, and the commands it prints.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IntendedUse } from '@vip/shared-schema';
import { createGateClient, createOriginClient, isApproved, ProblemError } from '@vip/shared-schema/client';
import { DEFAULT_ADMIN_EMAIL, isLoopbackUrl } from '../origin/src/config.js';
import { enrollSyntheticVoice } from '../origin/src/testing/synthetic-consent.js';
import { planeSettings } from './plane-settings.js';

export const DEMO = {
  platformName: 'Demo TTS Platform',
  ownerEmail: 'demo-owner@vip.local',
  /**
   * A synthetic speaker whose spoken consent of the current statement is committed
   * (fixtures/spoken-consent/synthetic/): the origin requires one by default.
   */
  voice: 'flite-awb',
  voiceName: 'Demo voice (flite awb, synthetic)',
  /** The licence's scope: asking for it is approved, asking for anything else is blocked. */
  licensedUse: 'audiobook',
  unlicensedUse: 'podcast',
  /** No voice has this id (ids are random v4 UUIDs): the same command on every run. */
  unenrolledVoiceId: '00000000-0000-4000-8000-000000000000',
} as const;

/** What DATA_DIR/demo.json keeps between runs. */
interface DemoState {
  admin_password?: string;
  /** The demo owner's sign-in to the console (`/console` at the origin), beside its password. */
  owner_email?: string;
  owner_password?: string;
  api_key?: string;
  api_key_id?: string;
}

export interface DemoRequest {
  /** The outcome the request reaches: a gate status, or the redemption of an approval's token. */
  outcome: 'approved' | 'blocked' | 'no_registry_record' | 'redeemed';
  url: string;
  headers: Record<string, string>;
  /** The JSON body; for the redemption, its token is read from the approval's answer. */
  body: Record<string, unknown>;
}

export interface DemoSeed {
  originUrl: string;
  edgeUrl: string;
  platformName: string;
  apiKey: string;
  voiceId: string;
  requests: DemoRequest[];
}

export interface SeedOptions {
  originUrl: string;
  edgeUrl: string;
  dataDir: string;
  /** How the seed signs in as the admin: its password, or an admin access token (`npm start -- --demo` signs one for an existing admin). */
  admin: { email: string; password?: string; accessToken?: string };
  /** DATABASE_URL of the service, when it runs on a Postgres server. */
  databaseUrl?: string;
  allowRemote?: boolean;
}

export class SeedRefused extends Error {
  override readonly name = 'SeedRefused';
}

const demoStatePath = (dataDir: string) => join(dataDir, 'demo.json');

export function readDemoState(dataDir: string): DemoState {
  const path = demoStatePath(dataDir);
  return existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as DemoState) : {};
}

export function writeDemoState(dataDir: string, state: DemoState): void {
  const path = demoStatePath(dataDir);
  writeFileSync(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
}

const newPassword = () => randomBytes(18).toString('base64url');

/** Polls until `done` holds: the edge learns of each change through the origin's outbox. */
async function eventually(done: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await done()) return;
    await new Promise((wait) => setTimeout(wait, 200));
  }
  throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
}

/** The admin's access token from a sign-in with its password (ADMIN_PASSWORD, else the one `--demo` kept in demo.json). */
async function adminLogin(options: SeedOptions, state: DemoState): Promise<string> {
  const password = options.admin.password ?? state.admin_password;
  const howToSignIn =
    "set ADMIN_PASSWORD to its password, or stop the service and start it with `npm start -- --demo`, which signs the seed in as the existing admin with the service's own key in DATA_DIR";
  if (!password) throw new SeedRefused(`no admin password for ${options.admin.email}: ${howToSignIn}`);
  const anonymous = createOriginClient({ baseUrl: options.originUrl });
  const login = await anonymous.auth.login({ email: options.admin.email, password }).catch((error: unknown) => {
    if (error instanceof ProblemError && error.status === 401) {
      throw new SeedRefused(`the admin ${options.admin.email} could not log in: ${howToSignIn}`);
    }
    throw error;
  });
  return login.access_token;
}

export async function seedDemo(options: SeedOptions): Promise<DemoSeed> {
  const remote = [options.originUrl, options.edgeUrl, ...(options.databaseUrl ? [options.databaseUrl] : [])].filter(
    (url) => !isLoopbackUrl(url),
  );
  if (remote.length > 0 && !options.allowRemote) {
    throw new SeedRefused(
      `not seeding demo data into a service or database that is not on this machine (${remote.map((url) => new URL(url).host).join(', ')}); pass --allow-remote to do it anyway`,
    );
  }
  const state = readDemoState(options.dataDir);
  const anonymous = createOriginClient({ baseUrl: options.originUrl });
  const asAdmin = createOriginClient({
    baseUrl: options.originUrl,
    bearerToken: options.admin.accessToken ?? (await adminLogin(options, state)),
  });

  // The platform and its API key (a key is shown once: the one from an earlier run is kept while it is live).
  const platforms = await asAdmin.platforms.list();
  const platform =
    platforms.platforms.find((existing) => existing.name === DEMO.platformName) ??
    (await asAdmin.platforms.create({ name: DEMO.platformName }));
  const liveKeys = (await asAdmin.platforms.listApiKeys(platform.platform_id)).api_keys.filter((key) => !key.revoked_at);
  if (!state.api_key || !liveKeys.some((key) => key.key_id === state.api_key_id)) {
    const key = await asAdmin.platforms.createApiKey(platform.platform_id);
    Object.assign(state, { api_key: key.api_key, api_key_id: key.key_id });
  }

  // The owner: registered on the first run, logged in on the next ones.
  state.owner_password ??= newPassword();
  state.owner_email = DEMO.ownerEmail;
  writeDemoState(options.dataDir, state);
  const owner = { email: state.owner_email, password: state.owner_password };
  await anonymous.auth.register(owner).catch((error: unknown) => {
    if (!(error instanceof ProblemError && error.status === 409)) throw error;
  });
  const ownerLogin = await anonymous.auth.login(owner);
  const asOwner = createOriginClient({ baseUrl: options.originUrl, bearerToken: ownerLogin.access_token });

  // The voice, enrolled from committed speech under a biometric consent and its spoken consent.
  const existingVoice = (await asOwner.voices.list()).voices.find((voice) => voice.name === DEMO.voiceName);
  const voiceId = existingVoice?.voice_id ?? (await enrollSyntheticVoice(asOwner, DEMO.voice, DEMO.voiceName)).voice_id;

  // Synthesis consent and a year's licence for the platform's audiobooks.
  await asOwner.synthesisConsent.set(voiceId, 'active');
  const licences = (await asOwner.licenses.list(voiceId)).licenses;
  const licensed = licences.some(
    (licence) => licence.platform_name === DEMO.platformName && licence.status === 'active' && licence.scopes.includes(DEMO.licensedUse),
  );
  if (!licensed) {
    await asOwner.licenses.create(voiceId, {
      platform_name: DEMO.platformName,
      scopes: [DEMO.licensedUse],
      description: 'Audiobook narration of the demo platform',
      expires_at: new Date(Date.now() + 365 * 86_400_000).toISOString(),
    });
  }

  const apiKey = state.api_key!;
  const gate = createGateClient({ baseUrl: options.edgeUrl, apiKey });
  const check = (intendedUse: IntendedUse) => ({ voice_id: voiceId, platform_name: DEMO.platformName, intended_use: intendedUse });
  await eventually(
    async () => {
      const answer = await gate.preSynthesisCheck(check(DEMO.licensedUse)).catch(() => undefined);
      return answer !== undefined && isApproved(answer);
    },
    20_000,
    'the gate approving the demo voice',
  );

  const gateUrl = `${options.edgeUrl}/api/v1/protect/pre-synthesis-check`;
  const headers = { 'content-type': 'application/json', 'x-api-key': apiKey };
  return {
    originUrl: options.originUrl,
    edgeUrl: options.edgeUrl,
    platformName: DEMO.platformName,
    apiKey,
    voiceId,
    requests: [
      { outcome: 'approved', url: gateUrl, headers, body: check(DEMO.licensedUse) },
      { outcome: 'blocked', url: gateUrl, headers, body: check(DEMO.unlicensedUse) },
      { outcome: 'no_registry_record', url: gateUrl, headers, body: { ...check(DEMO.licensedUse), voice_id: DEMO.unenrolledVoiceId } },
      {
        outcome: 'redeemed',
        url: `${options.edgeUrl}/api/v1/protect/authorizations/redeem`,
        headers,
        body: { token: '$TOKEN' },
      },
    ],
  };
}

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

export function curlOf(request: DemoRequest): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `-H ${shellQuote(`${name}: ${value}`)}`);
  // The redemption's token comes from the shell variable the approval command sets.
  const body = JSON.stringify(request.body).replace('"$TOKEN"', `"'"$TOKEN"'"`);
  return `curl -s ${request.url} ${headers.join(' ')} -d '${body}'`;
}

/** One line a newcomer pastes before following the guides: the planes, the demo platform's key and name, the demo voice. */
export const guideVariables = (seed: DemoSeed): string =>
  `export ORIGIN=${seed.originUrl} EDGE=${seed.edgeUrl} KEY=${seed.apiKey} PLATFORM=${shellQuote(seed.platformName)} VOICE_ID=${seed.voiceId}`;

/** The commands a newcomer pastes: one per outcome, the redemption using the approval's token. */
export function demoInstructions(seed: DemoSeed): string {
  const byOutcome = Object.fromEntries(seed.requests.map((request) => [request.outcome, request]));
  const readToken = `node -e 'let s="";process.stdin.on("data",(c)=>(s+=c)).on("end",()=>console.log(JSON.parse(s).authorization_token))'`;
  return [
    `Demo platform "${seed.platformName}", API key ${seed.apiKey}; demo voice ${seed.voiceId} (synthesis consent active, licensed for ${DEMO.licensedUse}).`,
    `Owner console (/console at the origin): sign in as ${DEMO.ownerEmail} with the owner_password in demo.json.`,
    '',
    "# The variables of the guides' shell blocks (docs/INTEGRATION.md, docs/OWNER-GUIDE.md):",
    guideVariables(seed),
    `# approved (${DEMO.licensedUse} is licensed):`,
    curlOf(byOutcome.approved!),
    `# blocked (${DEMO.unlicensedUse} is outside the licence: scope_mismatch):`,
    curlOf(byOutcome.blocked!),
    '# no_registry_record (a voice nobody enrolled):',
    curlOf(byOutcome.no_registry_record!),
    '# redeemed (an approval, then its single-use token redeemed; a second redemption answers 409):',
    `TOKEN=$(${curlOf(byOutcome.approved!)} | ${readToken})`,
    curlOf(byOutcome.redeemed!),
  ].join('\n');
}

/** The settings `npm run seed` takes from the environment `npm start` uses. */
export function seedOptionsFrom(env: NodeJS.ProcessEnv, allowRemote: boolean): SeedOptions {
  const settings = planeSettings(env);
  return {
    originUrl: env.ORIGIN_URL ?? `http://127.0.0.1:${settings.originPort}`,
    edgeUrl: env.EDGE_URL ?? `http://127.0.0.1:${settings.edgePort}`,
    dataDir: settings.dataDir,
    // Empty means unset, as for the origin's own settings.
    admin: { email: env.ADMIN_EMAIL || DEFAULT_ADMIN_EMAIL, password: env.ADMIN_PASSWORD || undefined },
    databaseUrl: env.DATABASE_URL,
    allowRemote,
  };
}
