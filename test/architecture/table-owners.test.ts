import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/repository.js';
import { sourceFiles } from './imports.js';

/**
 * Each table belongs to one origin folder, and only that folder queries it (docs/ARCHITECTURE.md,
 * "Domains use each other through their index.ts"): another domain asks the owner's index.ts. The
 * owners, by schema file under origin/src/db/schema/; a new schema file needs its line here.
 */
const OWNER_OF_SCHEMA_FILE: Record<string, string> = {
  'audit.ts': 'audit',
  'audit-pending.ts': 'audit',
  'audit-tlog.ts': 'audit',
  'biometric-consents.ts': 'biometric-consent',
  'edge-outbox.ts': 'edge-link',
  'embeddings.ts': 'voice-records',
  'events.ts': 'events',
  'auth.ts': 'auth',
  'license-requests.ts': 'license-requests',
  'licenses.ts': 'registry',
  'platforms.ts': 'platforms',
  'rate-limits.ts': 'http',
  'signing-certificates.ts': 'provenance',
  'spoken-consent.ts': 'spoken-consent',
  'voice-disputes.ts': 'voice-records',
  'voices.ts': 'voice-records',
  'watermarks.ts': 'provenance',
  'webhooks.ts': 'webhooks',
};

/** Reads of another folder's table kept on purpose, each one SQL statement (docs/ARCHITECTURE.md says why). */
const ALLOWED: Record<string, string[]> = {
  'webhooks/store.ts': ['domainEvents', 'users'],
};

const originRoot = join(repositoryRoot, 'origin/src');
const schemaRoot = join(originRoot, 'db/schema');
/** Above the domains (they build from parts), below them (no tables), and tests: not held. */
const NOT_HELD = /^(db|testing|jobs)\/|^(main|server|services)\.ts$|\.test\.ts$/;

/** Each table (a `pgTable` constant) with its owning folder. */
function tableOwners(): Map<string, string> {
  const owners = new Map<string, string>();
  for (const file of readdirSync(schemaRoot).filter((name) => name.endsWith('.ts'))) {
    const tables = [...readFileSync(join(schemaRoot, file), 'utf8').matchAll(/export const (\w+) = pgTable\(/g)].map(([, name]) => name!);
    for (const table of tables) owners.set(table, OWNER_OF_SCHEMA_FILE[file] ?? `(no owner for db/schema/${file})`);
  }
  return owners;
}

/** The tables `file` (a path under origin/src) imports from db/schema that its folder does not own, as `file → table (owner)`. */
function foreignTables(file: string, source: string, owners: Map<string, string>): string[] {
  const folder = file.split('/')[0]!;
  const imported = [...source.matchAll(/import\s*\{([^}]*)\}\s*from\s*'(?:\.\.\/)+db\/schema\.js'/g)].flatMap(([, names]) =>
    names!
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '' && !name.startsWith('type ')),
  );
  return imported
    .filter((name) => owners.has(name) && owners.get(name) !== folder && !(ALLOWED[file] ?? []).includes(name))
    .map((name) => `${file} → ${name} (${owners.get(name)})`);
}

describe("the origin's tables", () => {
  it('each have an owning folder', () => {
    expect([...tableOwners()].filter(([, owner]) => owner.startsWith('(no owner')).map(([table, owner]) => `${table} ${owner}`)).toEqual(
      [],
    );
  });

  it('are queried only by the folder that owns them', () => {
    const owners = tableOwners();
    const findings = sourceFiles(originRoot)
      .filter((file) => !NOT_HELD.test(file))
      .flatMap((file) => foreignTables(file, readFileSync(join(originRoot, file), 'utf8'), owners));
    expect(findings).toEqual([]);
    // The rule sees an import of another folder's table, and lets a row type through.
    expect(foreignTables('provenance/store.ts', "import { platforms, signingCertificates } from '../db/schema.js';", owners)).toEqual([
      'provenance/store.ts → platforms (platforms)',
    ]);
    expect(foreignTables('spoken-consent/service.ts', "import { type ChallengeRow, voices } from '../db/schema.js';", owners)).toEqual([
      'spoken-consent/service.ts → voices (voice-records)',
    ]);
    expect(foreignTables('voice-records/store.ts', "import { type ConsentRow, voices } from '../db/schema.js';", owners)).toEqual([]);
  });
});
