import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { localImportsOf, sourceFiles, specifiersOf } from './imports.js';

/**
 * The edge's layers (docs/ARCHITECTURE.md, "The edge's layers"): deciding (`gate/`) is pure and
 * stores nothing; the Durable Objects (`objects/`) store and never speak HTTP; `admission/` runs
 * the gate's sequence over both; `routes/` parse, authorize and shape. A layer never imports one
 * above it, type-only imports included: a type import is still a dependency a reader must follow.
 */
const sourceRoot = join(repositoryRoot, 'edge-gate/src');

/** A row of the table in docs/ARCHITECTURE.md, "The edge's layers". */
interface Layer {
  /** Folders (ending in `/`) and files of edge-gate/src the row is about. */
  names: string[];
  /** What they may import: folders, files, or patterns with `*`. */
  mayImport: string[];
}

const ticked = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map(([, name]) => name!);

/** The table, read from the document: it is the one statement of the rule, and this test holds the code to it. */
function layerTable(document: string): Layer[] {
  const start = document.indexOf("## The edge's layers");
  const section = document.slice(start, document.indexOf('\n## ', start + 1));
  const rows = section
    .split('\n')
    .filter((line) => line.startsWith('| ') && !line.startsWith('| folder') && !line.startsWith('|---'))
    .map((line) => line.slice(2, -2).split(' | '));
  const layers = rows.map(([names = '', , mayImport = '']) => ({
    names: ticked(names),
    mayImport: ticked(mayImport),
    below: mayImport === 'everything below',
  }));
  const base = layers.at(-1)!.names;
  return layers.map(({ names, mayImport, below }, index) => ({
    names,
    mayImport: [...(below ? layers.slice(index + 1).flatMap((layer) => layer.names) : mayImport), ...base],
  }));
}

const LAYERS = layerTable(readFileSync(join(repositoryRoot, 'docs/ARCHITECTURE.md'), 'utf8'));

const covers = (name: string, file: string) =>
  name.includes('*')
    ? new RegExp(`^${name.replaceAll('.', '\\.').replaceAll('*', '[^/]*')}$`).test(file)
    : name.endsWith('/')
      ? file.startsWith(name)
      : file === name;
const layerOf = (file: string) => LAYERS.find((layer) => layer.names.some((name) => covers(name, file)));

/** The imports of `file` its row does not allow, as `file → import`; a file no row names, as `file (no row)`. */
function crossings(file: string, source: string): string[] {
  const layer = layerOf(file);
  if (!layer) return [`${file} (no row of the table names it)`];
  return localImportsOf(sourceRoot, file, source)
    .filter((target) => layerOf(target) !== layer && !layer.mayImport.some((name) => covers(name, target)))
    .map((target) => `${file} → ${target}`);
}

describe("the edge's layers", () => {
  it('imports only downwards', () => {
    const files = sourceFiles(sourceRoot);
    expect(files.length).toBeGreaterThan(20);
    expect(files.flatMap((file) => crossings(file, readFileSync(join(sourceRoot, file), 'utf8')))).toEqual([]);
  });

  it('catches a type-only import across a wall as well as a value import', () => {
    expect(crossings('gate/rules.ts', "import type { VoiceGate } from '../objects/voice-gate.js';")).toEqual([
      'gate/rules.ts → objects/voice-gate.ts',
    ]);
    expect(crossings('objects/platform-desk.ts', "import { applyRateDecision } from '../http/rate-limit-headers.js';")).toEqual([
      'objects/platform-desk.ts → http/rate-limit-headers.ts',
    ]);
    expect(crossings('objects/voice-home.ts', "export type { AppEnv } from '../http/context.js';")).toEqual([
      'objects/voice-home.ts → http/context.ts',
    ]);
    expect(crossings('routes/redeem.ts', "import type { VoiceGate } from '../objects/voice-gate.js';")).toEqual([]);
    expect(crossings('admission/gate-check.ts', "import { VoiceGate } from '../objects/voice-gate.js';")).toEqual([
      'admission/gate-check.ts → objects/voice-gate.ts',
    ]);
    expect(crossings('admission/gate-check.ts', "import { platformDesk } from '../objects/platform-desk-client.js';")).toEqual([]);
    expect(crossings('gate/rules.ts', "import { loadConfig } from '../config.js';")).toEqual([]);
    expect(crossings('stray.ts', '')).toEqual(['stray.ts (no row of the table names it)']);
  });

  it("addresses a Durable Object only in its typed client (objects/*-client.ts), which alone knows the object's name", () => {
    const addressing = sourceFiles(sourceRoot).flatMap((file) =>
      addressedOutsideClient(file, readFileSync(join(sourceRoot, file), 'utf8')),
    );
    expect(addressing).toEqual([]);
    expect(addressedOutsideClient('routes/redeem.ts', 'env.VOICE_GATE.get(env.VOICE_GATE.idFromName(voiceId))')).toEqual([
      'routes/redeem.ts: env.VOICE_GATE.get(env.VOICE_GATE.idFromName(voiceId))',
    ]);
    expect(addressedOutsideClient('objects/platform-desk-client.ts', 'env.VOICE_GATE.idFromName(voiceId)')).toEqual([]);
  });

  it('keeps test support in test/testing/: the Worker imports no test library, and test/ holds tests beside it', () => {
    const TEST_LIBRARIES = ['vitest', 'fast-check', 'cloudflare:test'];
    const testLibraryImports = (file: string, source: string) =>
      specifiersOf(source)
        .filter((name) => TEST_LIBRARIES.includes(name))
        .map((name) => `${file} → ${name}`);
    expect(sourceFiles(sourceRoot).flatMap((file) => testLibraryImports(file, readFileSync(join(sourceRoot, file), 'utf8')))).toEqual([]);
    expect(testLibraryImports('gate/rules.ts', "import fc from 'fast-check';")).toEqual(['gate/rules.ts → fast-check']);

    const supportOutsideTesting = sourceFiles(join(repositoryRoot, 'edge-gate/test')).filter(
      (file) => !file.endsWith('.test.ts') && !file.endsWith('.d.ts') && !file.startsWith('testing/'),
    );
    expect(supportOutsideTesting).toEqual([]);
  });
});

/** The lines of `file` that make a Durable Object id, unless `file` is an object's client. */
function addressedOutsideClient(file: string, source: string): string[] {
  if (/^objects\/[a-z-]+-client\.ts$/.test(file)) return [];
  return source
    .split('\n')
    .filter((line) => /\.(idFromName|idFromString|newUniqueId)\(/.test(line))
    .map((line) => `${file}: ${line.trim()}`);
}
