import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { localImportsOf, sourceFiles, specifiersOf } from './imports.js';

/**
 * Test support lives in one testing/ folder per package (docs/ARCHITECTURE.md, where each kind of
 * test and its support lives). For the contract package this is read off who imports what: a module
 * of shared-schema/src that only tests, benches and test support use is test support, and belongs in
 * shared-schema/src/testing/; a module there is never imported by code that ships.
 */
const PACKAGE = 'shared-schema/src';
const SCANNED = ['shared-schema/src', 'origin/src', 'edge-gate/src', 'edge-gate/test', 'test', 'scripts', 'launch', 'tools'];

/**
 * What others outside the repository import: each folder's index.ts and the entries of the installable
 * client (client/tsconfig.json's files), which no module here needs to use.
 */
const clientEntries = (JSON.parse(readFileSync(join(repositoryRoot, 'client/tsconfig.json'), 'utf8')) as { files: string[] }).files.map(
  (file) => file.replace(/^\.\.\//, ''),
);
const isEntryPoint = (module: string) => module.endsWith('/index.ts') || clientEntries.includes(module);

/** Whether `file` (a path under the repository) is a test, a bench, test support or an offline tool (`tools/`: evaluations and fixture makers, never run by the service). */
const isTestSide = (file: string) =>
  /\.test\.ts$|\.bench\.ts$/.test(file) ||
  /(^|\/)testing\//.test(file) ||
  file.startsWith('test/') ||
  file.startsWith('edge-gate/test/') ||
  file.startsWith('tools/');

/** The shared-schema module an import names, as a path under the repository, if it names one. */
function packageModule(file: string, specifier: string): string | undefined {
  if (specifier.startsWith('.')) {
    const [target] = localImportsOf(repositoryRoot, file, `import '${specifier}';`);
    return target?.startsWith(`${PACKAGE}/`) ? target : undefined;
  }
  if (specifier === '@vip/shared-schema') return `${PACKAGE}/index.ts`;
  if (specifier === '@vip/shared-schema/client') return `${PACKAGE}/client/index.ts`;
  return specifier.startsWith('@vip/shared-schema/') ? `${PACKAGE}/${specifier.slice('@vip/shared-schema/'.length)}.ts` : undefined;
}

/** Each shared-schema module with the files that import it. */
function importersByModule(files: Record<string, string>): Map<string, string[]> {
  const importers = new Map<string, string[]>();
  for (const [file, source] of Object.entries(files)) {
    for (const specifier of specifiersOf(source)) {
      const target = packageModule(file, specifier);
      if (target && target !== file) importers.set(target, [...(importers.get(target) ?? []), file]);
    }
  }
  return importers;
}

/** Modules outside testing/ that only the test side imports, and testing/ modules that shipping code imports. */
function misplaced(files: Record<string, string>): string[] {
  const importers = importersByModule(files);
  const findings: string[] = [];
  for (const [module, by] of importers) {
    const inTesting = module.startsWith(`${PACKAGE}/testing/`);
    if (inTesting)
      findings.push(...by.filter((file) => !isTestSide(file)).map((file) => `${file} → ${module} (code that ships imports test support)`));
    else if (by.every(isTestSide) && !module.endsWith('.test.ts') && !isEntryPoint(module))
      findings.push(`${module} (only tests use it: move it to ${PACKAGE}/testing/)`);
  }
  return findings.sort();
}

const repositoryFiles = () =>
  Object.fromEntries(
    SCANNED.filter((dir) => existsSync(join(repositoryRoot, dir))).flatMap((dir) =>
      sourceFiles(join(repositoryRoot, dir)).map((file) => [`${dir}/${file}`, readFileSync(join(repositoryRoot, dir, file), 'utf8')]),
    ),
  );

describe("the contract package's test support", () => {
  it('lives in shared-schema/src/testing/, and no code that ships imports it', () => {
    expect(misplaced(repositoryFiles())).toEqual([]);
  });

  it('is found by the rule wherever it strays', () => {
    // The layout before: a test certificate authority beside the provenance code, used by tests alone.
    expect(
      misplaced({
        'shared-schema/src/provenance/test-ca.ts': 'export const ca = 1;',
        'shared-schema/src/provenance/signer.test.ts': "import { ca } from './test-ca.js';",
        'origin/src/provenance/provenance.test.ts': "import { ca } from '@vip/shared-schema/provenance/test-ca';",
      }),
    ).toEqual(['shared-schema/src/provenance/test-ca.ts (only tests use it: move it to shared-schema/src/testing/)']);
    expect(
      misplaced({
        'shared-schema/src/testing/provenance-ca.ts': 'export const ca = 1;',
        'origin/src/provenance/service.ts': "import { ca } from '@vip/shared-schema/testing/provenance-ca';",
      }),
    ).toEqual(['origin/src/provenance/service.ts → shared-schema/src/testing/provenance-ca.ts (code that ships imports test support)']);
    // Used by code that ships as well: not test support.
    expect(
      misplaced({
        'shared-schema/src/provenance/c2pa.ts': 'export const read = 1;',
        'shared-schema/src/provenance/c2pa.test.ts': "import { read } from './c2pa.js';",
        'origin/src/provenance/service.ts': "import { read } from '@vip/shared-schema/provenance/c2pa';",
      }),
    ).toEqual([]);
  });
});
