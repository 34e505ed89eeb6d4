import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';

/**
 * Comments and pages point only at what is in the repository: the API specification and the design
 * notes live outside it, so their sections are summarised in docs/CONTRACT.md and referred to by
 * that file and a heading's anchor. This fails on a section reference to the outside documents and on an
 * anchor into docs/ that no heading there makes.
 */
const SKIPPED_DIRECTORIES = new Set(['node_modules', '.git', '.data', '.wrangler', 'fixtures', 'dist', 'work', 'screenshots']);
const TEXT_FILE = /\.(ts|mjs|js|md|sql|toml|json|css|go)$/;
const SKIPPED_FILES = /(\.generated\.ts|package-lock\.json|benchmarks\.json|\.snapshot\.json|_snapshot\.json)$/;

function textFiles(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return SKIPPED_DIRECTORIES.has(entry.name) ? [] : textFiles(path);
    return TEXT_FILE.test(entry.name) && !SKIPPED_FILES.test(entry.name) ? [path] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replaceAll(' ', '-');

function anchorsOf(markdown: string): Set<string> {
  const headings = [...markdown.matchAll(/^#{1,6} (.+)$/gm)].map((match) => slug(match[1]!));
  const ids = [...markdown.matchAll(/\bid="([^"]+)"/g)].map((match) => match[1]!);
  return new Set([...headings, ...ids]);
}

const files = textFiles(repositoryRoot).map((path) => ({ path: relative(repositoryRoot, path), text: readFileSync(path, 'utf8') }));
const thisFile = 'test/architecture/doc-references.test.ts';

describe('references in comments and pages', () => {
  it('name no section of the specification or the design notes, which are not in the repository', () => {
    const outside = /\bDESIGN(?:\.md)?(?: sections?| §)? ?\d|\bDESIGN\.md\b|\b[Ss]pec(?: part| section| §)? ?\d+(?:\.\d+)?\b/;
    const found = files
      .filter((file) => file.path !== thisFile)
      .flatMap((file) =>
        file.text
          .split('\n')
          .map((line, index) => [line, index] as const)
          .filter(([line]) => outside.test(line))
          .map(([line, index]) => `${file.path}:${index + 1}: ${line.trim()}`),
      );
    expect(found).toEqual([]);
  });

  it('point into docs/ at headings that exist', () => {
    const docs = new Map(files.filter((file) => file.path.startsWith('docs/')).map((file) => [file.path, anchorsOf(file.text)]));
    const broken: string[] = [];
    for (const file of files) {
      for (const match of file.text.matchAll(/\bdocs\/([A-Z-]+\.md)#([\w-]+)/g)) {
        if (!docs.get(`docs/${match[1]}`)?.has(match[2]!)) broken.push(`${file.path}: docs/${match[1]}#${match[2]}`);
      }
      if (!file.path.startsWith('docs/')) continue;
      for (const match of file.text.matchAll(/\]\(([A-Z-]+\.md)?#([\w-]+)\)/g)) {
        const target = match[1] ? `docs/${match[1]}` : file.path;
        if (!docs.get(target)?.has(match[2]!)) broken.push(`${file.path}: ${target}#${match[2]}`);
      }
    }
    expect(broken).toEqual([]);
    // The pages' contract summary is what the references lean on.
    expect(docs.get('docs/CONTRACT.md')?.has('gate-results')).toBe(true);
  });
});
