import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { localImportsOf, sourceFiles, specifiersOf } from './imports.js';

/**
 * The origin's layers (docs/ARCHITECTURE.md, "The origin's folders"), bottom up: the configuration
 * and a few dependency-free helpers; `db/`; `http/` plumbing; the domain folders; `jobs/`; the
 * composition root (`services.ts` builds every service, `server.ts` wires them, `main.ts` runs it).
 * Paths are under origin/src; a prefix ending in `/` is a folder. Tests are consumers, not a layer,
 * so `*.test.ts` files are left out.
 */
interface Wall {
  /** What the wall says, as a failure names it. */
  says: string;
  /** The files it holds back. */
  files: string[];
  /** Files under `files` it does not hold back. */
  except?: string[];
  /** The only app modules those files may import (their own folder included when listed)… */
  only?: string[];
  /** …or the app modules they may not import, `unless` one of these. */
  never?: string[];
  unless?: string[];
}

const WALLS: Wall[] = [
  { says: 'the configuration depends on nothing in the app', files: ['config.ts'], only: ['parse-json.ts'] },
  { says: 'the leaf helpers depend on nothing in the app', files: ['parse-json.ts', 'runtime.ts', 'worker-threads.ts'], only: [] },
  { says: 'the database layer knows no domain', files: ['db/'], only: ['db/', 'config.ts'] },
  { says: 'the HTTP plumbing knows no domain', files: ['http/'], only: ['http/', 'db/', 'runtime.ts'] },
  { says: 'the loop primitives know no domain', files: ['loops/'], only: ['loops/'] },
  { says: 'the voice records know no domain', files: ['voice-records/'], only: ['voice-records/', 'db/', 'http/cursor.ts'] },
  {
    says: 'only the composition root builds the app',
    files: [''],
    except: ['main.ts', 'server.ts', 'testing/'],
    never: ['main.ts', 'server.ts', 'services.ts'],
  },
  {
    says: 'the domains know the loop primitives, not the jobs that run them',
    files: [''],
    except: ['jobs/', 'main.ts', 'server.ts', 'testing/'],
    never: ['jobs/'],
  },
  {
    says: 'only the edge link calls the edge',
    files: [''],
    except: ['edge-link/'],
    never: ['edge-link/edge-call.ts'],
  },
  {
    says: 'the server never imports test support',
    files: [''],
    except: ['testing/'],
    never: ['testing/'],
  },
];

const sourceRoot = join(repositoryRoot, 'origin/src');
const matches = (path: string, prefixes: readonly string[]) => prefixes.some((prefix) => path.startsWith(prefix));

/** The imports of `file` that cross a wall, as `file → import (what the wall says)`. */
function crossings(file: string, source: string): string[] {
  if (file.endsWith('.test.ts')) return [];
  const imports = localImportsOf(sourceRoot, file, source).filter((target) => !target.startsWith('../'));
  return WALLS.filter((wall) => matches(file, wall.files) && !matches(file, wall.except ?? [])).flatMap((wall) =>
    imports
      .filter((target) =>
        wall.only ? !matches(target, wall.only) : matches(target, wall.never ?? []) && !matches(target, wall.unless ?? []),
      )
      .map((target) => `${file} → ${target} (${wall.says})`),
  );
}

/**
 * A domain is a folder of origin/src above `db/`, `http/` and `loops/` and below `jobs/`; `registry/` is one
 * domain with four parts. What a domain lets others use is exported from its `index.ts`; its stores,
 * services and routes are its own, so another domain never imports them (docs/ARCHITECTURE.md,
 * "Domains use each other through their index.ts").
 */
const NOT_DOMAINS = ['db/', 'http/', 'loops/', 'voice-records/', 'jobs/', 'testing/'];
/** The link to the edge is plumbing the domains write through (the outbox in their transaction, the nudge after it), as they use `db/`. */
const PLUMBING = ['edge-link/'];

const domainOf = (path: string): string | null => {
  const [folder, ...rest] = path.split('/');
  return rest.length === 0 || matches(path, [...NOT_DOMAINS, ...PLUMBING]) ? null : folder!;
};

/** The imports of `file` that reach inside another domain, as `file → import (…)`. */
function reachesInside(file: string, source: string): string[] {
  const home = domainOf(file);
  if (file.endsWith('.test.ts') || home === null) return [];
  return localImportsOf(sourceRoot, file, source).flatMap((target) => {
    const owner = domainOf(target);
    return owner === null || owner === home || target === `${owner}/index.ts` ? [] : [`${file} → ${target} (use ${owner}/index.ts)`];
  });
}

/**
 * The domains' imports of each other as a graph: a node per domain folder (`edge-link/` one too, but
 * for its outbox store, which the domains write through as they write `db/`), an edge from each file's
 * domain to each other domain it imports, with the first file that does as its example.
 */
const cycleNodeOf = (path: string): string | null =>
  path === 'edge-link/outbox-store.ts' ? null : path.startsWith('edge-link/') ? 'edge-link' : domainOf(path);

function domainGraph(sources: Record<string, string>): Map<string, Map<string, string>> {
  const graph = new Map<string, Map<string, string>>();
  for (const [file, source] of Object.entries(sources)) {
    const from = cycleNodeOf(file);
    if (from === null || file.endsWith('.test.ts')) continue;
    for (const target of localImportsOf(sourceRoot, file, source)) {
      const to = cycleNodeOf(target);
      if (to === null || to === from) continue;
      const edges = graph.get(from) ?? new Map<string, string>();
      if (!edges.has(to)) edges.set(to, `${file} → ${target}`);
      graph.set(from, edges);
    }
  }
  return graph;
}

/** Each circle of domains, as the imports that close it: `a → b`, …, back to `a` (the shortest circle through each domain on one). */
function domainCycles(graph: Map<string, Map<string, string>>): string[][] {
  const neighbours = (node: string) => [...(graph.get(node)?.keys() ?? [])].sort();
  const circles = new Map<string, string[]>();
  for (const start of [...graph.keys()].sort()) {
    // Breadth first from `start` until an import leads back to it: the shortest circle through it.
    const cameFrom = new Map<string, string>();
    const queue = [start];
    let closing: string | undefined;
    while (queue.length > 0 && closing === undefined) {
      const node = queue.shift()!;
      for (const next of neighbours(node)) {
        if (next === start) {
          closing = node;
          break;
        }
        if (!cameFrom.has(next)) {
          cameFrom.set(next, node);
          queue.push(next);
        }
      }
    }
    if (closing === undefined) continue;
    const path = [closing];
    while (path[0] !== start) path.unshift(cameFrom.get(path[0]!)!);
    const key = [...path].sort().join(',');
    if (!circles.has(key))
      circles.set(
        key,
        path.map((node, i) => graph.get(node)!.get(path[(i + 1) % path.length]!)!),
      );
  }
  return [...circles.values()];
}

describe("the origin's layers", () => {
  it('imports only downwards', () => {
    const files = sourceFiles(sourceRoot);
    expect(files.length).toBeGreaterThan(100);
    expect(files.flatMap((file) => crossings(file, readFileSync(join(sourceRoot, file), 'utf8')))).toEqual([]);
  });

  it('catches a type-only import across a wall as well as a value import', () => {
    expect(crossings('config.ts', "import type { WebhookSettings } from './webhooks/service.js';")).toEqual([
      'config.ts → webhooks/service.ts (the configuration depends on nothing in the app)',
    ]);
    expect(crossings('config.ts', "import { DEFAULT_RETRY_SCHEDULE_SECONDS } from './webhooks/schedule.js';")).toEqual([
      'config.ts → webhooks/schedule.ts (the configuration depends on nothing in the app)',
    ]);
    expect(crossings('config.ts', "export type { EncryptionKey } from './webhooks/secret-encryption.js';")).toEqual([
      'config.ts → webhooks/secret-encryption.ts (the configuration depends on nothing in the app)',
    ]);
    expect(crossings('http/routes.ts', "type Guard = import('../auth/guard.js').Principal;")).toEqual([
      'http/routes.ts → auth/guard.ts (the HTTP plumbing knows no domain)',
    ]);
    expect(crossings('voices/routes.ts', "import type { Services } from '../services.js';")).toEqual([
      'voices/routes.ts → services.ts (only the composition root builds the app)',
    ]);
    expect(crossings('loops/background-loop.ts', "import type { VoiceRow } from '../db/schema.js';")).toEqual([
      'loops/background-loop.ts → db/schema.ts (the loop primitives know no domain)',
    ]);
    expect(crossings('webhooks/worker.ts', "import type { BackgroundJobs } from '../jobs/background-jobs.js';")).toEqual([
      'webhooks/worker.ts → jobs/background-jobs.ts (the domains know the loop primitives, not the jobs that run them)',
    ]);
    expect(crossings('jobs/background-jobs.ts', "import { callEdge } from '../edge-link/edge-call.js';")).toEqual([
      'jobs/background-jobs.ts → edge-link/edge-call.ts (only the edge link calls the edge)',
    ]);
    expect(crossings('voices/service.ts', "import type { TestOrigin } from '../testing/origin.js';")).toEqual([
      'voices/service.ts → testing/origin.ts (the server never imports test support)',
    ]);
    // What the walls allow.
    expect(crossings('webhooks/worker.ts', "import type { RoundOutcome } from '../loops/background-loop.js';")).toEqual([]);
    expect(crossings('voices/service.ts', "import type { WakeSignal } from '../loops/wake-signal.js';")).toEqual([]);
    expect(crossings('platforms/service.ts', "import { enqueueEdgeUpdate } from '../edge-link/outbox-store.js';")).toEqual([]);
    expect(crossings('config.ts', "import { parseJsonOrUndefined } from './parse-json.js';")).toEqual([]);
    expect(crossings('webhooks/secret-encryption.ts', "import type { EncryptionKey } from '../config.js';")).toEqual([]);
    expect(crossings('server.ts', "import { buildServices } from './services.js';")).toEqual([]);
  });

  it('lets a domain use another only through its index.ts', () => {
    expect(sourceFiles(sourceRoot).flatMap((file) => reachesInside(file, readFileSync(join(sourceRoot, file), 'utf8')))).toEqual([]);
    expect(reachesInside('screening/service.ts', "import { registryAuditRecord } from '../registry/edge-index/audit.js';")).toEqual([
      'screening/service.ts → registry/edge-index/audit.ts (use registry/index.ts)',
    ]);
    expect(reachesInside('license-requests/service.ts', "import type { LicenseService } from '../registry/licenses/service.js';")).toEqual([
      'license-requests/service.ts → registry/licenses/service.ts (use registry/index.ts)',
    ]);
    expect(reachesInside('voices/routes.ts', "type Who = import('../auth/guard.js').Principal;")).toEqual([
      'voices/routes.ts → auth/guard.ts (use auth/index.ts)',
    ]);
    // What the rule allows: the owner's index.ts, the domain's own files, the layers below.
    expect(reachesInside('screening/service.ts', "import { nearestVoices } from '../voice-records/store.js';")).toEqual([]);
    expect(reachesInside('registry/licenses/service.ts', "import { publishToEdgeIndex } from '../edge-index/publish.js';")).toEqual([]);
    expect(reachesInside('voices/reviews.ts', "import { olderThan } from '../http/cursor.js';")).toEqual([]);
    expect(reachesInside('jobs/background-jobs.ts', "import { WebhookWorker } from '../webhooks/worker.js';")).toEqual([]);
  });

  it('has no circle of domains: each leans only on domains below it', () => {
    const sources = Object.fromEntries(sourceFiles(sourceRoot).map((file) => [file, readFileSync(join(sourceRoot, file), 'utf8')]));
    const graph = domainGraph(sources);
    expect(graph.size).toBeGreaterThan(10);
    expect(domainCycles(graph)).toEqual([]);
    // One import the other way closes a circle, and the failure names the imports around it.
    const withCircle = domainGraph({ ...sources, 'audit/owner-filter.ts': "import { eraseVoice } from '../voices/erase.js';" });
    expect(domainCycles(withCircle)).toContainEqual([
      'audit/owner-filter.ts → voices/erase.ts',
      expect.stringMatching(/^voices\/.+ → audit\/index\.ts$/),
    ]);
    // The outbox store is written through by every domain and is no node: importing it closes no circle.
    const throughOutbox = domainGraph({ ...sources, 'edge-link/outbox-store.ts': "import { x } from '../registry/index.js';" });
    expect(domainCycles(throughOutbox)).toEqual([]);
  });

  it('keeps test support in testing/: no other module outside a test imports a test library', () => {
    const TEST_LIBRARIES = ['vitest', 'fast-check'];
    const supportOutsideTesting = (file: string, source: string) =>
      file.endsWith('.test.ts') || matches(file, ['testing/'])
        ? []
        : specifiersOf(source)
            .filter((name) => TEST_LIBRARIES.includes(name))
            .map((name) => `${file} → ${name}`);
    expect(sourceFiles(sourceRoot).flatMap((file) => supportOutsideTesting(file, readFileSync(join(sourceRoot, file), 'utf8')))).toEqual(
      [],
    );
    expect(supportOutsideTesting('audit/test-records.ts', "import fc from 'fast-check';")).toEqual(['audit/test-records.ts → fast-check']);
    expect(supportOutsideTesting('testing/audit-records.ts', "import fc from 'fast-check';")).toEqual([]);
    expect(supportOutsideTesting('voiceprint/test-support/stand-ins.ts', "import { expect } from 'vitest';")).toEqual([
      'voiceprint/test-support/stand-ins.ts → vitest',
    ]);
  });
});

describe("docs/ARCHITECTURE.md's map of the origin", () => {
  /** The section "The origin's folders", up to the next section of its level. */
  const section = () => {
    const text = readFileSync(join(repositoryRoot, 'docs/ARCHITECTURE.md'), 'utf8');
    const start = text.indexOf("## The origin's folders");
    return text.slice(start, text.indexOf('\n## ', start + 1));
  };
  /** Each folder (as `name/`) and each module beside them (tests left out) directly in origin/src. */
  const topLevel = readdirSync(sourceRoot, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() || (/\.m?ts$/.test(entry.name) && !entry.name.endsWith('.test.ts')))
    .map((entry) => (entry.isDirectory() ? `${entry.name}/` : entry.name));

  it('names every folder and module of origin/src', () => {
    expect(topLevel.length).toBeGreaterThan(20);
    const text = section();
    expect(topLevel.filter((name) => !text.includes(`\`${name}\``))).toEqual([]);
  });
});
