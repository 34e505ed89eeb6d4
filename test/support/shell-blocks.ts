import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repositoryRoot } from './repository.js';

/** A ```sh block of a Markdown file: where it opens, and its lines (a block indented under a list item loses the indent). */
export interface ShellBlock {
  /** `docs/INTEGRATION.md:617` */
  at: string;
  text: string;
}

/** Every ```sh block of `file` (relative to the repository's root), in order. */
export function shellBlocks(file: string): ShellBlock[] {
  const lines = readFileSync(join(repositoryRoot, file), 'utf8').split('\n');
  const blocks: ShellBlock[] = [];
  let open: { line: number; indent: string; body: string[] } | null = null;
  for (const [index, line] of lines.entries()) {
    const fence = /^(\s*)```(\w*)\s*$/.exec(line);
    if (open) {
      if (fence && fence[2] === '') {
        blocks.push({ at: `${file}:${open.line}`, text: open.body.join('\n') });
        open = null;
      } else {
        open.body.push(line.startsWith(open.indent) ? line.slice(open.indent.length) : line);
      }
    } else if (fence?.[2] === 'sh') {
      open = { line: index + 1, indent: fence[1]!, body: [] };
    }
  }
  return blocks;
}

/**
 * A reader's terminal: blocks run one after another in bash, each seeing the variables and the
 * working folder the blocks before it left, as when they are pasted into one shell. Each runs with
 * `set -euo pipefail` and every curl fails on an HTTP error with its body shown, so a block runs as
 * written only if every command in it succeeds and every call is answered 2xx.
 */
export class ShellSession {
  private environment: Record<string, string>;
  private readonly folder = mkdtempSync(join(tmpdir(), 'vip-shell-'));
  private readonly stateFile = join(this.folder, 'environment');
  /** Every answer curl received in the current block, shown when the block fails (an answer a block captured is printed by nothing else). */
  private readonly answersFile = join(this.folder, 'answers');

  constructor(directory: string, environment: Record<string, string>) {
    this.environment = { ...environment, PWD: directory };
  }

  /** A variable a block set, or the session started with. */
  variable(name: string): string {
    const value = this.environment[name];
    if (value === undefined) throw new Error(`no block set ${name}`);
    return value;
  }

  /** What the reader does between blocks (records consent.wav, is handed a value). */
  set(name: string, value: string): void {
    this.environment[name] = value;
  }

  get directory(): string {
    return this.variable('PWD');
  }

  /** Runs the block; answers what it printed. */
  async run(block: ShellBlock): Promise<string> {
    const script = [
      'set -a -euo pipefail',
      'curl() { command curl --fail-with-body "$@" | tee -a "$VIP_SHELL_ANSWERS"; }',
      block.text,
      'env -0 > "$VIP_SHELL_STATE"',
    ].join('\n');
    const child = spawn('bash', ['-c', script], {
      cwd: this.directory,
      env: { ...this.environment, VIP_SHELL_STATE: this.stateFile, VIP_SHELL_ANSWERS: this.answersFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    writeFileSync(this.answersFile, '');
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    if (code !== 0) {
      const answers = readFileSync(this.answersFile, 'utf8');
      throw new Error(
        `the block at ${block.at} exited with ${code}:\n${block.text}\n--- it printed:\n${output}\n--- curl's answers:\n${answers}`,
      );
    }
    const {
      VIP_SHELL_STATE: _state,
      VIP_SHELL_ANSWERS: _answers,
      ...environment
    } = Object.fromEntries(
      readFileSync(this.stateFile, 'utf8')
        .split('\0')
        .filter((entry) => entry.includes('='))
        .map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]),
    );
    this.environment = environment;
    return output;
  }
}
