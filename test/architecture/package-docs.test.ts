import { execFileSync, spawnSync } from 'node:child_process';
import { createPrivateKey } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { embedAuthorization } from '@vip/shared-schema/client/provenance';
import { readCredentials } from '@vip/shared-schema/provenance/credentials';
import { testApprovalReceipt } from '@vip/shared-schema/testing/provenance-receipt';
import { minVersion } from 'semver';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

const read = (path: string) => readFileSync(join(repositoryRoot, path), 'utf8');
const readJson = <T>(path: string): T => JSON.parse(read(path)) as T;
const guide = read('docs/INTEGRATION.md');
const clientReadme = read('client/README.md');
const client = readJson<{ engines: { node: string }; dependencies: Record<string, string> }>('client/package.json');
/** The backticked names in `text`, outside its parentheses (which say what each is for). */
const codeSpans = (text: string) => [...text.replaceAll(/\([^)]*\)/g, '').matchAll(/`([^`]+)`/g)].map((match) => match[1]!);

/** What the docs say of the packages (their dependencies, the Node they need) against the package files. */
describe('the docs, against the package files', () => {
  it("name the packed client's dependencies as client/package.json lists them", () => {
    const dependencies = Object.keys(client.dependencies).sort();
    const inGuide = /built to JavaScript with type declarations; its dependencies are ([^.]+)\./.exec(guide);
    expect(codeSpans(inGuide?.[1] ?? '').sort()).toEqual(dependencies);
    const inReadme = /for its dependencies:\s+([^.]+)\./.exec(clientReadme);
    expect(codeSpans(inReadme?.[1] ?? '').sort()).toEqual(dependencies);
    // Installing the tarball fetches them: both say so.
    expect(guide).toContain('Installing the\ntarball needs registry access');
    expect(clientReadme).toContain('Installing the tarball needs registry access');
  });

  it('name as the oldest Node the one the root and the client accept', () => {
    const root = readJson<{ engines: { node: string } }>('package.json').engines.node;
    expect(client.engines.node).toBe(root);
    const [major, minor] = minVersion(root)!.version.split('.');
    const floors = ['README.md', 'client/README.md', 'docs/INTEGRATION.md'].flatMap((path) =>
      [...read(path).matchAll(/Node(?:\.js)? (\d+(?:\.\d+)?)(?:\+| or later)/g)].map((match) => `${path}: Node ${match[1]}`),
    );
    expect(floors.length).toBeGreaterThanOrEqual(4);
    expect(floors.filter((floor) => !floor.endsWith(`Node ${major}.${minor}`))).toEqual([]);
  });

  const openssl = spawnSync('openssl', ['version']).status === 0;
  it.skipIf(!openssl)("makes, with section 13's openssl lines, a CA and a signer whose signed file c2pa-rs trusts", async () => {
    const recipe = /```sh\n((?:\s*# The CA:[\s\S]*?))\s*```/.exec(guide)?.[1];
    expect(recipe).toContain('openssl x509 -req');
    const folder = mkdtempSync(join(tmpdir(), 'vip-openssl-'));
    try {
      execFileSync('bash', ['-euo', 'pipefail', '-c', recipe!], { cwd: folder, stdio: 'pipe' });
      const file = (name: string) => readFileSync(join(folder, name), 'utf8');
      const { receipt, entry } = await testApprovalReceipt();
      const audio = new Uint8Array(readFileSync(join(repositoryRoot, 'fixtures/audio/a.pcm16.wav')));
      const signed = await embedAuthorization(
        audio,
        'audio/wav',
        { check_id: entry.check_id, receipt },
        { certificateChain: [file('signer.pem'), file('ca.pem')], privateKey: createPrivateKey(file('signer.key')) },
      );
      expect(await readCredentials(signed, 'audio/wav', { trustAnchors: file('ca.pem') })).toMatchObject({
        state: 'trusted',
        failure_codes: [],
      });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
