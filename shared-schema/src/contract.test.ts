import { describe, expect, it } from 'vitest';
import { buildOpenApiDocument, type RouteContract } from './contract.js';
import { PROBLEM_CODES_EXTENSION } from './docs-anchors.js';
import { PROBLEM_CODES, problemSchema } from './problem.js';
import * as edge from './routes/edge.js';
import * as origin from './routes/origin/index.js';
import * as pages from './routes/pages.js';

/** Every route contract in `modules`, wherever the route files keep them (exported alone or in an object). */
function contractsOf(...modules: object[]): RouteContract[] {
  const found = new Set<RouteContract>();
  const collect = (value: unknown): void => {
    if (!value || typeof value !== 'object') return;
    if ('operationId' in value && 'path' in value) found.add(value as RouteContract);
    else Object.values(value).forEach(collect);
  };
  modules.forEach(collect);
  return [...found];
}

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; description?: string; format?: string; pattern?: string };
type Content = Record<string, { schema?: Schema; example?: unknown }>;
type Operation = {
  operationId: string;
  parameters?: { name: string; description?: string; schema: Schema }[];
  requestBody?: { content: Content };
  responses: Record<string, { content?: Content }>;
};
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
  info: { description: string };
  [PROBLEM_CODES_EXTENSION]: string;
};

/** Each plane's routes (the page routes of both included), documented as the plane documents them. */
const planes = [contractsOf(edge, pages.playgroundPageRoutes), contractsOf(origin, pages)].map((contracts) => ({
  contracts,
  document: buildOpenApiDocument({ title: 'plane', version: '1', description: 'its routes' }, contracts) as Document,
}));
const operations = planes.flatMap(({ document }) => Object.values(document.paths).flatMap((methods) => Object.values(methods)));
const components = planes.flatMap(({ document }) => Object.entries(document.components.schemas));

/** Every place a schema can hold another, walked with where it is, to name what the test finds. */
function* schemasIn(node: unknown, where: string): Generator<[string, Schema]> {
  if (!node || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* schemasIn(item, `${where}[${index}]`);
    return;
  }
  const schema = node as Schema;
  yield [where, schema];
  for (const [name, property] of Object.entries(schema.properties ?? {})) yield* schemasIn(property, `${where}.${name}`);
  for (const keyword of ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties'])
    yield* schemasIn(schema[keyword], `${where}/${keyword}`);
}

function* everySchema(): Generator<[string, Schema]> {
  for (const [id, schema] of components) yield* schemasIn(schema, id);
  for (const operation of operations) {
    for (const parameter of operation.parameters ?? []) yield* schemasIn(parameter.schema, `${operation.operationId}(${parameter.name})`);
    for (const content of Object.values(operation.requestBody?.content ?? {}))
      yield* schemasIn(content.schema, `${operation.operationId} request`);
    for (const [status, response] of Object.entries(operation.responses)) {
      for (const content of Object.values(response.content ?? {})) yield* schemasIn(content.schema, `${operation.operationId} ${status}`);
    }
  }
}

describe('the OpenAPI documents explain themselves', () => {
  it('covers the routes of both planes', () => {
    expect(operations.length).toBeGreaterThan(50);
    expect(operations.map((operation) => operation.operationId)).toEqual(
      expect.arrayContaining(['preSynthesisCheck', 'enrollVoice', 'listAuditEntries']),
    );
  });

  it('describes every field and every parameter in one line', () => {
    const undescribed: string[] = [];
    for (const [where, schema] of everySchema()) {
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (!property.description) undescribed.push(`${where}.${name}`);
        else if (property.description.includes('\n')) undescribed.push(`${where}.${name} (more than one line)`);
      }
    }
    for (const operation of operations) {
      for (const parameter of operation.parameters ?? [])
        if (!parameter.description) undescribed.push(`${operation.operationId}(${parameter.name})`);
    }
    expect(undescribed).toEqual([]);
  });

  it('shows a format by its name, not the regular expression zod writes for it', () => {
    const spelledOut = [...everySchema()].filter(([, schema]) => schema.format && schema.pattern).map(([where]) => where);
    expect(spelledOut).toEqual([]);
    const longPatterns = [...everySchema()].filter(([, schema]) => String(schema.pattern ?? '').length > 60).map(([where]) => where);
    expect(longPatterns).toEqual([]);
    const { document } = planes[1]!;
    expect(document.components.schemas.Platform?.properties?.platform_id).toMatchObject({ type: 'string', format: 'uuid' });
    expect(document.components.schemas.Platform?.properties?.created_at).toMatchObject({ type: 'string', format: 'date-time' });
  });

  it('gives every request and every answer an example, which the route’s own schema accepts', () => {
    const withoutExample: string[] = [];
    const rejected: string[] = [];
    for (const { contracts, document } of planes)
      for (const contract of contracts.filter((c) => !c.auth.every((scheme) => scheme === 'internalSignature'))) {
        const operation = document.paths[contract.path]![contract.method]!;
        const contents: [string, Content | undefined, { safeParse(value: unknown): { success: boolean } } | undefined][] = [
          ['request', operation.requestBody?.content, contract.body],
          ...Object.entries(operation.responses).map(([status, response]): [string, Content | undefined, undefined] => [
            status,
            response.content,
            undefined,
          ]),
        ];
        for (const [part, content, schema] of contents) {
          for (const [mediaType, media] of Object.entries(content ?? {})) {
            // Pages, scripts, tiles and the documents themselves are not JSON fields to explain.
            if (!/json|multipart/.test(mediaType) || !media.schema) continue;
            if (media.example === undefined) {
              withoutExample.push(`${contract.operationId} ${part} ${mediaType}`);
              continue;
            }
            const validator = schema ?? (part === String(contract.success.status) ? contract.success.schema : problemSchema);
            if (mediaType !== 'multipart/form-data' && validator && !validator.safeParse(media.example).success) {
              rejected.push(`${contract.operationId} ${part}: ${JSON.stringify(media.example)}`);
            }
          }
        }
      }
    expect(withoutExample).toEqual([]);
    expect(rejected).toEqual([]);
  });

  it('puts the problem codes after the operations, not in the introduction', () => {
    const { document } = planes[0]!;
    expect(document.info.description).not.toContain('| code | status | title |');
    expect(document.info.description).toContain('<a href="#problem-codes">problem codes</a>');
    expect(Object.keys(document).indexOf(PROBLEM_CODES_EXTENSION)).toBeGreaterThan(-1);
    for (const [code, { status }] of Object.entries(PROBLEM_CODES))
      expect(document[PROBLEM_CODES_EXTENSION]).toContain(`| \`${code}\` | ${status} |`);
  });
});

/**
 * Every path the origin answered when its contracts were regrouped by folder (issue 28): paths are a
 * public contract (docs/CONTRACT.md#versioning), so a renamed constant or a moved file must not move
 * one. A new path may join the list; none leaves it.
 */
const PUBLISHED_ORIGIN_PATHS = [
  'DELETE /api/v1/platforms/{platform_id}/api-keys/{key_id}',
  'DELETE /api/v1/voices/{voice_id}',
  'DELETE /api/v1/webhooks/{webhook_id}',
  'GET /',
  'GET /.well-known/jwks.json',
  'GET /api/v1/admin/voice-reviews',
  'GET /api/v1/license-requests/{request_id}',
  'GET /api/v1/platform-names/{platform_name}',
  'GET /api/v1/platforms',
  'GET /api/v1/platforms/{platform_id}/api-keys',
  'GET /api/v1/protect/audit-log',
  'GET /api/v1/protect/audit-log/checkpoints',
  'GET /api/v1/protect/audit-log/checkpoints/keys',
  'GET /api/v1/protect/audit-log/checkpoints/latest',
  'GET /api/v1/protect/audit-log/verify',
  'GET /api/v1/protect/audit-log/{check_id}/receipt',
  'GET /api/v1/signing-certificates',
  'GET /api/v1/voices',
  'GET /api/v1/voices/{voice_id}/license-requests',
  'GET /api/v1/voices/{voice_id}/licenses',
  'GET /api/v1/webhooks',
  'GET /api/v1/webhooks/{webhook_id}/deliveries',
  'GET /console',
  'GET /console/console.css',
  'GET /console/console.js',
  'GET /docs',
  'GET /docs/assets/docs.css',
  'GET /docs/assets/docs.js',
  'GET /docs/assets/swagger-ui-bundle.js',
  'GET /docs/assets/swagger-ui.css',
  'GET /favicon.ico',
  'GET /healthz',
  'GET /licensing',
  'GET /openapi.json',
  'GET /readyz',
  'GET /tlog/checkpoint',
  'GET /tlog/tile/{tile}',
  'GET /tlog/vkey',
  'POST /api/v1/admin/voice-reviews/{voice_id}',
  'POST /api/v1/auth/login',
  'POST /api/v1/auth/logout',
  'POST /api/v1/auth/password',
  'POST /api/v1/auth/refresh',
  'POST /api/v1/auth/register',
  'POST /api/v1/consents',
  'POST /api/v1/consents/challenges',
  'POST /api/v1/detection/compare',
  'POST /api/v1/platforms',
  'POST /api/v1/platforms/{platform_id}/api-keys',
  'POST /api/v1/protect/screen',
  'POST /api/v1/provenance/verify',
  'POST /api/v1/signing-certificates',
  'POST /api/v1/signing-certificates/{certificate_id}/revoke',
  'POST /api/v1/voices/enroll',
  'POST /api/v1/voices/measure',
  'POST /api/v1/voices/{voice_id}/license-requests',
  'POST /api/v1/voices/{voice_id}/license-requests/{request_id}/approve',
  'POST /api/v1/voices/{voice_id}/license-requests/{request_id}/decline',
  'POST /api/v1/voices/{voice_id}/licenses',
  'POST /api/v1/voices/{voice_id}/licenses/{license_id}/renew',
  'POST /api/v1/voices/{voice_id}/licenses/{license_id}/revoke',
  'POST /api/v1/voices/{voice_id}/re-enroll',
  'POST /api/v1/webhooks/register',
  'POST /api/v1/webhooks/{webhook_id}/enable',
  'POST /api/v1/webhooks/{webhook_id}/rotate-secret',
  'POST /api/v1/webhooks/{webhook_id}/test',
  'PUT /api/v1/voices/{voice_id}/consent',
];

describe("the origin's paths", () => {
  it('keep every published method and path, whatever the code calls the route', () => {
    const declared = contractsOf(origin, pages).map((contract) => `${contract.method.toUpperCase()} ${contract.path}`);
    expect(PUBLISHED_ORIGIN_PATHS.filter((path) => !declared.includes(path))).toEqual([]);
  });
});
