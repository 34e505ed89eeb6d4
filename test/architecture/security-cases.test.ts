import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { BODY_ROUTES, OWNER_SCOPED, PLATFORM_SCOPED } from '../security/route-scopes.js';
import { repositoryRoot } from '../support/repository.js';

/**
 * Every route a threat applies to has its case in the security suite (test/security/), checked here
 * from the suite's source in seconds: the suite itself runs against a started service and would
 * report a missing case minutes into cross:security. A case table is an object literal whose keys
 * are operationIds; its keys are read with the TypeScript parser, so a case is counted only where
 * the suite defines it.
 */

/** The property names of the object literal `name` is initialized with, in `source`. */
function caseKeys(source: string, name: string): string[] {
  const file = ts.createSourceFile('cases.ts', source, ts.ScriptTarget.Latest, true);
  const keys: string[] = [];
  let found = false;
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name && node.initializer) {
      if (!ts.isObjectLiteralExpression(node.initializer)) throw new Error(`${name} is not an object literal`);
      found = true;
      for (const property of node.initializer.properties) {
        if (property.name && (ts.isIdentifier(property.name) || ts.isStringLiteral(property.name))) keys.push(property.name.text);
        else throw new Error(`${name} has a case whose name is computed: name each case by its operationId`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  if (!found) throw new Error(`no case table named ${name}`);
  return keys.sort();
}

const suite = (file: string) => readFileSync(join(repositoryRoot, 'test/security', file), 'utf8');
const objectLevel = suite('object-level-authorization.test.ts');
const massAssignment = suite('mass-assignment.test.ts');
const tables = {
  ownerCases: caseKeys(objectLevel, 'ownerCases'),
  platformCases: caseKeys(objectLevel, 'platformCases'),
  jsonCases: caseKeys(massAssignment, 'jsonCases'),
  multipartCases: caseKeys(massAssignment, 'multipartCases'),
};

describe('the security suite has a case for every route a threat applies to', () => {
  it('object-level authorization: a cross-owner case for every owner-scoped route', () => {
    expect(tables.ownerCases).toEqual(OWNER_SCOPED);
  });

  it('object-level authorization: a cross-platform case for every platform-scoped route', () => {
    expect(tables.platformCases).toEqual(PLATFORM_SCOPED);
  });

  it('mass assignment: a case for every route that takes a body', () => {
    expect([...tables.jsonCases, ...tables.multipartCases].sort()).toEqual(BODY_ROUTES);
  });

  it('reads the keys the suite defines, and notices a missing or unnamed one', () => {
    const source = `const ownerCases: Record<string, () => Promise<void>> = {
      listVoices: async () => {},
      'deleteVoice': async () => {},
    };`;
    expect(caseKeys(source, 'ownerCases')).toEqual(['deleteVoice', 'listVoices']);
    expect(caseKeys(source, 'ownerCases')).not.toEqual(['deleteVoice', 'listVoices', 'renewLicense']);
    expect(() => caseKeys('const ownerCases = { [route]: async () => {} };', 'ownerCases')).toThrow(/computed/);
    expect(() => caseKeys(source, 'platformCases')).toThrow(/no case table/);
  });
});
