import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOriginClient } from '@vip/shared-schema/client';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { sourceFiles, specifiersOf } from './imports.js';

/**
 * The origin's route contracts mirror its folders (docs/ARCHITECTURE.md#how-to-add-an-origin-route):
 * shared-schema/src/routes/origin/<domain>.ts declares the routes origin/src/<domain>/ serves, so
 * a reader finds a route's contract, its handler and its client namespace under one name.
 */
const contractRoot = join(repositoryRoot, 'shared-schema/src/routes/origin');
const originRoot = join(repositoryRoot, 'origin/src');
const CONTRACT_PACKAGE = '@vip/shared-schema/routes/origin/';

/** `audit`, `registry/licenses`, …: each contract file, as the folder it names. */
const contractFiles = sourceFiles(contractRoot)
  .filter((file) => file !== 'index.ts')
  .map((file) => file.replace(/\.ts$/, ''));

/** The contract file the folder of `file` (a path under origin/src) serves: the longest that names a folder above it. */
const domainOf = (file: string) =>
  contractFiles.filter((domain) => file.startsWith(`${domain}/`)).sort((a, b) => b.length - a.length)[0] ?? '(none)';

describe("the origin's route contracts", () => {
  it('are one file per origin domain folder, each named as the folder is', () => {
    expect(contractFiles.filter((domain) => !existsSync(join(originRoot, domain)))).toEqual([]);
  });

  it('are each listed in routes/origin/index.ts, where the contract test reads them', () => {
    // `export * as name from './file.js'`, which the compiler's import scan does not list.
    const index = readFileSync(join(contractRoot, 'index.ts'), 'utf8');
    const listed = [...index.matchAll(/from '\.\/([\w/-]+)\.js'/g)].map(([, file]) => file!);
    expect(listed.sort()).toEqual([...contractFiles].sort());
  });

  it("are registered by the folder they are named for: a file that adds routes imports only its own folder's contracts", () => {
    const registrars = sourceFiles(originRoot)
      .filter((file) => !file.endsWith('.test.ts'))
      .map((file) => ({ file, source: readFileSync(join(originRoot, file), 'utf8') }))
      .filter(({ source }) => source.includes('addRoute('));
    // The rule must see the registrars, a nested folder's and a folder's second one included, or it would hold nothing.
    expect(registrars.map(({ file }) => file)).toEqual(expect.arrayContaining(['registry/licenses/routes.ts', 'audit/tlog-routes.ts']));
    expect(domainOf('registry/licenses/routes.ts')).toBe('registry/licenses');
    const strays = registrars.flatMap(({ file, source }) =>
      specifiersOf(source)
        .filter((name) => name.startsWith(CONTRACT_PACKAGE) && name.slice(CONTRACT_PACKAGE.length) !== domainOf(file))
        .map((name) => `${file} → ${name}`),
    );
    expect(strays).toEqual([]);
  });

  it('have a namespace of the typed client each, named as the file is, but for the routes that serve no JSON', () => {
    const namespaces = Object.keys(createOriginClient({ baseUrl: 'http://127.0.0.1' }));
    // The health check, the reference pages and the licensing page answer HTML or plain text: nothing for the client.
    const withoutClient = ['health', 'http', 'registry/licensing-page'];
    const camel = (domain: string) => domain.replace(/^registry\//, '').replace(/-(\w)/g, (_, letter: string) => letter.toUpperCase());
    expect(contractFiles.filter((domain) => !withoutClient.includes(domain) && !namespaces.includes(camel(domain)))).toEqual([]);
  });
});
