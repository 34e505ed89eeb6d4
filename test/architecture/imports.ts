import { readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

/**
 * What a source file imports, read the way the compiler reads it: value and type-only imports,
 * re-exports, dynamic `import()` and `import('…')` types alike. A type import is still a dependency
 * a reader must follow, so the walls count it.
 */
export function specifiersOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((imported) => imported.fileName);
}

/** The relative imports of `file` (a path under `root`), as paths under `root` (`../…` when they leave it), `.js` read as `.ts`. */
export function localImportsOf(root: string, file: string, source: string): string[] {
  return specifiersOf(source)
    .filter((name) => name.startsWith('.'))
    .map((name) => relative(root, join(dirname(join(root, file)), name)).replace(/\.js$/, '.ts'));
}

/** Every `.ts` file under `dir`, as a path under `root`. */
export function sourceFiles(root: string, dir = root): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(root, join(dir, entry.name))
      : entry.name.endsWith('.ts')
        ? [relative(root, join(dir, entry.name))]
        : [],
  );
}
