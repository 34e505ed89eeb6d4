import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * test/tlog-verify, the Go program that checks the transparency log with golang.org/x/mod/sumdb.
 * Built offline from Debian's sources (golang-go, golang-golang-x-mod-dev) in GOPATH mode; where
 * they are not installed, `goMissing` says why and the tests that need it skip.
 */

const GOPATH = '/usr/share/gocode';
const SOURCE = fileURLToPath(new URL('../../../test/tlog-verify/', import.meta.url));

function missing(): string | null {
  if (spawnSync('go', ['version']).error) return 'go is not installed (apt-get install golang-go golang-golang-x-mod-dev)';
  if (!existsSync(join(GOPATH, 'src/golang.org/x/mod/sumdb/tlog')))
    return `golang.org/x/mod is not under ${GOPATH} (apt-get install golang-golang-x-mod-dev)`;
  return null;
}

export const goMissing = missing();

const run = promisify(execFile);

export interface GoVerifier {
  /** Runs the verifier: its output line, and whether the check passed (exit 0) or failed (exit 1). */
  run(args: readonly string[]): Promise<{ ok: boolean; output: string }>;
  /** Removes the built program. */
  dispose(): void;
}

/** Builds the verifier into a temporary folder. */
export async function buildGoVerifier(): Promise<GoVerifier> {
  const dir = mkdtempSync(join(tmpdir(), 'vip-tlog-verify-'));
  const binary = join(dir, 'tlog-verify');
  // One build cache for every run (Go's cache is safe to share), so later builds take a moment.
  const env = {
    ...process.env,
    GO111MODULE: 'off',
    GOPATH,
    GOFLAGS: '',
    GOCACHE: join(tmpdir(), 'vip-go-build-cache'),
    GOTOOLCHAIN: 'local',
  };
  await run('go', ['build', '-o', binary, '.'], { cwd: SOURCE, env });
  return {
    run: async (args) => {
      try {
        const { stdout } = await run(binary, [...args]);
        return { ok: true, output: stdout.trim() };
      } catch (error) {
        const failed = error as { stdout?: string; stderr?: string; code?: number };
        if (failed.code !== 1) throw error;
        return { ok: false, output: `${failed.stdout ?? ''}${failed.stderr ?? ''}`.trim() };
      }
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
