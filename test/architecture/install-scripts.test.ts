import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

const readJson = <T>(path: string): T => JSON.parse(readFileSync(join(repositoryRoot, path), 'utf8')) as T;
/** The package a lockfile path installs: `node_modules/a/node_modules/@s/b` → `@s/b`. */
const packageAt = (lockPath: string) => lockPath.slice(lockPath.lastIndexOf('node_modules/') + 'node_modules/'.length);

/**
 * A quiet install (README, "Install caveats"): npm 11 lists every dependency whose install script
 * `package.json` `allowScripts` does not name, and warns on every command about a `.npmrc` key it
 * does not know.
 */
describe('the install', () => {
  const allowScripts = readJson<{ allowScripts: Record<string, boolean> }>('package.json').allowScripts;
  const readme = readFileSync(join(repositoryRoot, 'README.md'), 'utf8');

  it('names, allowed or denied, exactly the locked packages that have install scripts', () => {
    const packages = readJson<{ packages: Record<string, { hasInstallScript?: boolean }> }>('package-lock.json').packages;
    const withScripts = new Set(
      Object.entries(packages)
        .filter(([, locked]) => locked.hasInstallScript)
        .map(([path]) => packageAt(path)),
    );
    expect(Object.keys(allowScripts).sort()).toEqual([...withScripts].sort());
  });

  it('says in the README why each package may or may not run its install script', () => {
    const caveats = readme.slice(readme.indexOf('Install caveats'), readme.indexOf('## Documentation'));
    for (const [name, allowed] of Object.entries(allowScripts)) {
      expect(caveats, name).toContain(`\`${name}\` (${allowed ? 'allowed' : 'denied'}:`);
    }
  });

  it('sets nothing in .npmrc that npm does not know', () => {
    // npm 11 reads the project's .npmrc for every command and warns there about each unknown key.
    const npm = spawnSync('npm', ['config', 'get', 'fund'], { cwd: repositoryRoot, encoding: 'utf8' });
    expect(npm.status).toBe(0);
    expect(npm.stderr).not.toMatch(/Unknown project config/);
  });
});
