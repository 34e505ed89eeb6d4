import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { localImportsOf, sourceFiles, specifiersOf } from './imports.js';

/**
 * The two planes share only the contract package (docs/ARCHITECTURE.md): the origin never imports
 * the edge, the edge never imports the origin, and the contract imports neither. Tests included:
 * a test that reached into the other plane would tie the planes together just the same. None of
 * them imports the offline tools (`tools/`), which may import them.
 */
const FORBIDDEN: Record<string, string[]> = {
  'origin/': ['edge-gate/', '@vip/edge-gate', 'tools/'],
  'edge-gate/': ['origin/', '@vip/origin', 'tools/'],
  'shared-schema/': ['origin/', 'edge-gate/', '@vip/origin', '@vip/edge-gate', 'tools/'],
};
const SCANNED = ['origin/src', 'edge-gate/src', 'edge-gate/test', 'shared-schema/src'];

/** The imports of `file` (a path under the repository) that reach the other plane, as `file → import`. */
function crossings(file: string, source: string): string[] {
  const plane = Object.keys(FORBIDDEN).find((prefix) => file.startsWith(prefix));
  if (!plane) return [];
  const packages = specifiersOf(source).filter((name) => !name.startsWith('.'));
  return [...localImportsOf(repositoryRoot, file, source), ...packages]
    .filter((target) => FORBIDDEN[plane]!.some((wall) => target === wall || target.startsWith(wall.endsWith('/') ? wall : `${wall}/`)))
    .map((target) => `${file} → ${target}`);
}

describe('the planes', () => {
  it('import only the contract package from each other', () => {
    const files = SCANNED.flatMap((dir) => sourceFiles(repositoryRoot, join(repositoryRoot, dir)));
    expect(files.length).toBeGreaterThan(200);
    expect(files.flatMap((file) => crossings(file, readFileSync(join(repositoryRoot, file), 'utf8')))).toEqual([]);
  });

  it('catches a type-only import into the other plane as well as a value import', () => {
    expect(
      crossings('origin/src/edge-link/outbox-sender.ts', "import type { SyncUpdate } from '../../../edge-gate/src/edge-index/kv.js';"),
    ).toEqual(['origin/src/edge-link/outbox-sender.ts → edge-gate/src/edge-index/kv.ts']);
    expect(crossings('edge-gate/src/gate/rules.ts', "import { LicenseService } from '../../../origin/src/licenses/service.js';")).toEqual([
      'edge-gate/src/gate/rules.ts → origin/src/licenses/service.ts',
    ]);
    expect(crossings('edge-gate/src/app.ts', "export type { OriginServer } from '@vip/origin/src/server.js';")).toEqual([
      'edge-gate/src/app.ts → @vip/origin/src/server.js',
    ]);
    expect(crossings('shared-schema/src/gate.ts', "import type { Env } from '@vip/edge-gate';")).toEqual([
      'shared-schema/src/gate.ts → @vip/edge-gate',
    ]);
    expect(crossings('origin/src/server.ts', "import { limits } from '@vip/shared-schema';")).toEqual([]);
    expect(crossings('origin/src/server.ts', "import { x } from '@vip/origin-tools';")).toEqual([]);
    expect(
      crossings('origin/src/voiceprint/engine.ts', "import { x } from '../../../tools/voiceprint-training/embedding-cache.js';"),
    ).toEqual(['origin/src/voiceprint/engine.ts → tools/voiceprint-training/embedding-cache.ts']);
  });

  it('leave the offline tools outside their source folders: origin/src holds what the origin runs', () => {
    const offline = ['origin/src', 'edge-gate/src', 'shared-schema/src']
      .flatMap((dir) => readdirSync(join(repositoryRoot, dir), { recursive: true }).map((file) => `${dir}/${String(file)}`))
      .filter((file) => file.endsWith('.py') || /\/(training|tools)\//.test(file) || file.endsWith('/calibrate.ts'));
    expect(offline).toEqual([]);
  });

  it("reach the contract through its package's exports, never by a path into shared-schema/src", () => {
    const files = ['origin/src', 'edge-gate/src', 'edge-gate/test'].flatMap((dir) =>
      sourceFiles(repositoryRoot, join(repositoryRoot, dir)),
    );
    const intoTheContract = (file: string, source: string) =>
      localImportsOf(repositoryRoot, file, source)
        .filter((target) => target.startsWith('shared-schema/'))
        .map((target) => `${file} → ${target}`);
    expect(files.flatMap((file) => intoTheContract(file, readFileSync(join(repositoryRoot, file), 'utf8')))).toEqual([]);
    expect(
      intoTheContract('origin/src/console/browser/main.ts', "import { h } from '../../../../shared-schema/src/browser/dom.js';"),
    ).toEqual(['origin/src/console/browser/main.ts → shared-schema/src/browser/dom.ts']);
  });
});
