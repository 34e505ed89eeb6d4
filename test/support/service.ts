import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIOMETRIC_CONSENT_STATEMENT } from '@vip/shared-schema';
import { freePort } from '../../launch/free-port.js';
import { type OriginFront, startOriginFront } from '../../launch/origin-front.js';
import { type PlaneLaunch, preparePlanes, waitUntilServing } from '../../launch/planes.js';
import { CORPUS_SPEAKERS_SPOKEN_CONSENT } from '../../origin/src/testing/origin.js';
import { type CuttableLink, startCuttableLink } from './link.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * The suites enroll corpus speakers, who never read a consent statement and a challenge phrase: the
 * planes they start check a spoken consent when one is sent, as the in-process origins of
 * origin/src/testing/ do. A test of the default, `required`,
 * passes SPOKEN_CONSENT itself (test/e2e/demo-seed.test.ts).
 */
const CORPUS_SPEAKERS_ENV = { SPOKEN_CONSENT: CORPUS_SPEAKERS_SPOKEN_CONSENT.mode };

/** The environment the planes of a test start with: this process's, the suites' setting, the test's own. */
const planeEnv = (env: Record<string, string> = {}) => ({ ...process.env, ...CORPUS_SPEAKERS_ENV, ...env });

export interface RunningService {
  originUrl: string;
  edgeUrl: string;
  dataDir: string;
  /** Everything both planes printed so far. */
  output: () => string;
  /** Sends SIGINT as Ctrl-C does and resolves with the exit code. */
  stop: () => Promise<number | null>;
}

export interface ServiceOptions {
  dataDir?: string;
  env?: Record<string, string>;
  /** Arguments to `npm start` (`--demo`). */
  args?: string[];
}

export interface PlanesOptions extends ServiceOptions {
  /** `npm start -- --replicas N`: N origin replicas behind the front on the origin's address (needs DATABASE_URL in `env`). */
  replicas?: number;
  /** Each plane reaches the other through a link the test can cut (`RunningPlanes.link`). */
  cuttableLinks?: boolean;
}

/** Starts the service exactly as `npm start` does, on free ports and a private data folder. */
export async function startService(options: ServiceOptions = {}): Promise<RunningService> {
  const [originPort, edgePort] = [await freePort(), await freePort()];
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'vip-e2e-'));
  const child: ChildProcess = spawn(join(root, 'node_modules/.bin/tsx'), [join(root, 'scripts/start.ts'), ...(options.args ?? [])], {
    cwd: root,
    env: planeEnv({ ORIGIN_PORT: String(originPort), EDGE_PORT: String(edgePort), DATA_DIR: dataDir, ...options.env }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: false,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });

  await new Promise<void>((resolveReady, reject) => {
    const timer = setTimeout(() => {
      // A service that never became ready still runs its planes, and would slow every later test:
      // start.ts stops both on SIGINT; one that does not exit by then is killed.
      child.kill('SIGINT');
      const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
      child.once('exit', () => clearTimeout(forced));
      reject(new Error(`service did not become ready:\n${output}`));
    }, 110_000);
    const check = setInterval(() => {
      if (output.includes('[start] ready')) {
        clearInterval(check);
        clearTimeout(timer);
        resolveReady();
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(check);
      clearTimeout(timer);
      reject(new Error(`service exited with ${code} before it was ready:\n${output}`));
    });
  });

  return {
    originUrl: `http://127.0.0.1:${originPort}`,
    edgeUrl: `http://127.0.0.1:${edgePort}`,
    dataDir,
    output: () => output,
    stop: () =>
      new Promise((resolveExit) => {
        if (child.exitCode !== null) return resolveExit(child.exitCode);
        child.once('exit', (code) => resolveExit(code));
        child.kill('SIGINT');
      }),
  };
}

export async function json(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

/**
 * What wrangler dev's proxy answers (503, text) to a POST it could not hand to the Worker because the
 * runtime behind it was swapped: it retries GET and HEAD itself and asks for anything else to be sent
 * again. A deployed Worker has no such proxy; seen once in a faults run on a loaded machine.
 */
const WRANGLER_DEV_PROXY_RESTART = 'Your worker restarted mid-request';

export async function post(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    if (response.status !== 503 || attempt === 3) return response;
    if (!(await response.clone().text()).startsWith(WRANGLER_DEV_PROXY_RESTART)) return response;
  }
}

/** The bootstrap admin registers a platform and issues it a key; answers the key. */
export async function issuePlatformKey(
  originUrl: string,
  admin: { email: string; password: string },
  platformName: string,
): Promise<string> {
  const adminToken = (await json(await post(`${originUrl}/api/v1/auth/login`, admin))).access_token as string;
  const asAdmin = { authorization: `Bearer ${adminToken}` };
  const platform = await json(await post(`${originUrl}/api/v1/platforms`, { name: platformName }, asAdmin));
  return (await json(await post(`${originUrl}/api/v1/platforms/${platform.platform_id}/api-keys`, {}, asAdmin))).api_key as string;
}

/** Registers an owner account and logs it in; answers its access token. */
export async function registeredOwner(originUrl: string, owner: { email: string; password: string }): Promise<string> {
  const registered = await post(`${originUrl}/api/v1/auth/register`, owner);
  if (registered.status !== 201) throw new Error(`register answered ${registered.status}`);
  return (await json(await post(`${originUrl}/api/v1/auth/login`, owner))).access_token as string;
}

/** Grants the owner's biometric consent and enrolls a voice from Opus clips; answers the voice id. */
export async function enrolledVoice(originUrl: string, ownerToken: string, name: string, clips: Uint8Array[]): Promise<string> {
  const asOwner = { authorization: `Bearer ${ownerToken}` };
  const consent = await post(
    `${originUrl}/api/v1/consents`,
    { type: 'biometric', statement_version: BIOMETRIC_CONSENT_STATEMENT.version, accepted: true },
    asOwner,
  );
  if (consent.status !== 201) throw new Error(`consent answered ${consent.status}`);
  const form = new FormData();
  form.set('name', name);
  form.set('consent_id', (await json(consent)).consent_id as string);
  for (const [index, clip] of clips.entries())
    form.append('audio', new Blob([Uint8Array.from(clip)], { type: 'audio/ogg' }), `clip-${index}.opus`);
  const enrolled = await fetch(`${originUrl}/api/v1/voices/enroll`, { method: 'POST', headers: asOwner, body: form });
  if (enrolled.status !== 201) throw new Error(`enroll answered ${enrolled.status}: ${await enrolled.text()}`);
  return (await json(enrolled)).voice_id as string;
}

/** The owner grants the voice's synthesis consent and licenses it to `platformName` for audiobooks, 30 days; answers the licence. */
export async function consentedAndLicensed(
  originUrl: string,
  ownerToken: string,
  voiceId: string,
  platformName: string,
): Promise<Record<string, unknown>> {
  const asOwner = { authorization: `Bearer ${ownerToken}` };
  const consented = await fetch(`${originUrl}/api/v1/voices/${voiceId}/consent`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...asOwner },
    body: JSON.stringify({ status: 'active' }),
  });
  if (consented.status !== 200) throw new Error(`consent answered ${consented.status}`);
  const licence = {
    platform_name: platformName,
    scopes: ['audiobook'],
    description: 'Narration of audiobook chapters for the tests',
    expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
  };
  const licensed = await post(`${originUrl}/api/v1/voices/${voiceId}/licenses`, licence, asOwner);
  if (licensed.status !== 201) throw new Error(`licence answered ${licensed.status}: ${await licensed.text()}`);
  return json(licensed);
}

/** Polls `probe` until it returns true or the deadline passes; resolves with the elapsed milliseconds. */
export async function eventually(probe: () => Promise<boolean>, timeoutMs: number): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (await probe()) return performance.now() - start;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`condition not met within ${timeoutMs} ms`);
}

/** One plane of a `startPlanes` service: a process the test can stop (gracefully or by a crash) and start again. */
export interface Plane {
  readonly name: PlaneLaunch['name'];
  readonly url: string;
  /** Process id of the plane's top process while it runs. */
  pid(): number | null;
  /** Starts the plane (again, on the same port and data) and resolves once it serves `/openapi.json`. */
  start(): Promise<void>;
  /**
   * Signals the plane's whole process group (tsx and node; wrangler and workerd) and resolves once every
   * process of it is gone. SIGTERM is a clean stop, SIGKILL a crash.
   */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Freezes every process of the plane (SIGSTOP): it keeps its sockets but answers nothing until `resume`. */
  pause(): void;
  resume(): void;
}

export interface RunningPlanes {
  originUrl: string;
  edgeUrl: string;
  dataDir: string;
  /** The origin: its one process, or with `replicas` all of them at once. */
  origin: Plane;
  /** Each origin process (`origin`, or `origin-1`, `origin-2`, …), to stop or restart one alone. */
  replicas: Plane[];
  edge: Plane;
  /** With `cuttableLinks`: cuts both directions between the planes (a partition), and heals them. */
  link: { cut(): void; heal(): void } | null;
  /** Everything the planes printed so far, each line prefixed with `[origin]` (`[origin-1]`, …) or `[edge]`. */
  output: () => string;
  /** Stops both planes; `removeData` then deletes the data folder (keep it after a failure: it holds planes.log). */
  stop: (options?: { removeData?: boolean }) => Promise<void>;
}

/**
 * Starts the two planes as separate processes, with the very commands and environment `npm start`
 * gives them (`preparePlanes` from launch/planes.ts), so a test can stop or restart one of them
 * while the other keeps running.
 */
export async function startPlanes(options: PlanesOptions = {}): Promise<RunningPlanes> {
  const [originPort, edgePort] = [await freePort(), await freePort()];
  const replicaPorts = options.replicas && options.replicas > 1 ? await freePorts(options.replicas) : undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'vip-faults-'));
  const links: CuttableLink[] = options.cuttableLinks
    ? await Promise.all([startCuttableLink(`http://127.0.0.1:${edgePort}`), startCuttableLink(`http://127.0.0.1:${originPort}`)])
    : [];
  const launches = await preparePlanes(
    { originPort, edgePort, dataDir, replicaPorts },
    planeEnv(options.env),
    links.length > 0 ? { edgeFromOrigin: links[0]!.url, originFromEdge: links[1]!.url } : {},
  );
  // In this process, as `npm start` runs it in its own.
  const front: OriginFront | null = launches.front ? await startOriginFront(launches.front.port, launches.front.replicaPorts) : null;
  let output = '';
  // Also kept in the data folder, to read after a failed run.
  const log = createWriteStream(join(dataDir, 'planes.log'), { flags: 'a' });
  const write = (text: string) => {
    output += text;
    log.write(text);
  };
  const replicas = launches.replicas.map((launch) => planeProcess(launch, write));
  const origin = replicas.length === 1 ? replicas[0]! : planeGroup('origin', launches.originUrl, replicas);
  const edge = planeProcess(launches.edge, write);
  const closeLinks = async () => {
    await front?.close();
    await Promise.all(links.map((link) => link.close()));
  };
  try {
    await Promise.all([origin.start(), edge.start()]);
  } catch (error) {
    await Promise.all([origin.stop('SIGKILL'), edge.stop('SIGKILL')]);
    await closeLinks();
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return {
    originUrl: launches.originUrl,
    edgeUrl: launches.edge.url,
    dataDir,
    origin,
    replicas,
    edge,
    link:
      links.length > 0
        ? {
            cut: () => {
              for (const link of links) link.cut();
            },
            heal: () => {
              for (const link of links) link.heal();
            },
          }
        : null,
    output: () => output,
    stop: async ({ removeData = false } = {}) => {
      await Promise.all([origin.stop(), edge.stop()]);
      await closeLinks();
      await new Promise((resolve) => log.end(resolve));
      if (removeData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/** Several origin replicas as one plane: each call acts on all of them at once. */
function planeGroup(name: Plane['name'], url: string, members: Plane[]): Plane {
  return {
    name,
    url,
    pid: () => members[0]!.pid(),
    start: async () => {
      await Promise.all(members.map((member) => member.start()));
    },
    stop: async (signal) => {
      await Promise.all(members.map((member) => member.stop(signal)));
    },
    pause: () => {
      for (const member of members) member.pause();
    },
    resume: () => {
      for (const member of members) member.resume();
    },
  };
}

/**
 * The origin plane alone, launched exactly as `npm start` launches it, for measurements of the
 * origin that need no gate (its index updates wait in the outbox for an edge that is not there).
 */
export async function startOriginPlane(
  options: ServiceOptions = {},
): Promise<{ originUrl: string; dataDir: string; stop: () => Promise<void> }> {
  const [originPort, edgePort] = [await freePort(), await freePort()];
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'vip-origin-'));
  const launches = await preparePlanes({ originPort, edgePort, dataDir }, planeEnv(options.env));
  let output = '';
  const origin = planeProcess(launches.replicas[0]!, (text) => {
    output += text;
  });
  try {
    await origin.start();
  } catch (error) {
    await origin.stop('SIGKILL');
    throw new Error(`${(error as Error).message}\n${output}`);
  }
  return { originUrl: launches.originUrl, dataDir, stop: () => origin.stop() };
}

function planeProcess(launch: PlaneLaunch, write: (text: string) => void): Plane {
  let child: ChildProcess | null = null;
  /** Signals the process group; false when none of it is left. */
  const signalGroup = (pgid: number, signal: NodeJS.Signals | 0) => {
    try {
      process.kill(-pgid, signal);
      return true;
    } catch {
      return false;
    }
  };
  const groupAlive = (pgid: number) => signalGroup(pgid, 0);
  return {
    name: launch.name,
    url: launch.url,
    pid: () => (child && child.exitCode === null && child.signalCode === null ? (child.pid ?? null) : null),
    async start() {
      if (child && groupAlive(child.pid!)) throw new Error(`${launch.name} is already running`);
      // Its own process group, so a stop reaches every process the plane spawned.
      const started = spawn(launch.command, launch.args, {
        cwd: launch.cwd,
        env: launch.env,
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      });
      child = started;
      for (const stream of [started.stdout, started.stderr]) {
        let pending = '';
        stream?.on('data', (chunk: Buffer) => {
          const lines = (pending + chunk.toString()).split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) write(`[${launch.name}] ${line}\n`);
        });
      }
      await waitUntilServing(launch, started, Date.now() + 110_000);
    },
    pause() {
      if (child?.pid) signalGroup(child.pid, 'SIGSTOP');
    },
    resume() {
      if (child?.pid) signalGroup(child.pid, 'SIGCONT');
    },
    async stop(signal = 'SIGTERM') {
      const running = child;
      if (!running?.pid || !groupAlive(running.pid)) return;
      const exited = running.exitCode === null && running.signalCode === null ? new Promise((r) => running.once('exit', r)) : null;
      signalGroup(running.pid, signal);
      // A paused plane must run again to act on SIGTERM.
      signalGroup(running.pid, 'SIGCONT');
      const force = setTimeout(() => signalGroup(running.pid!, 'SIGKILL'), 10_000);
      await exited;
      // Bounded: a process whose parent died may linger as a zombie where nothing reaps orphans.
      for (const deadline = Date.now() + 12_000; groupAlive(running.pid) && Date.now() < deadline; ) {
        await new Promise((r) => setTimeout(r, 25));
      }
      clearTimeout(force);
    },
  };
}
