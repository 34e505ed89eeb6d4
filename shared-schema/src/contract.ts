import { z } from 'zod';
import { PROBLEM_CODES, type ProblemCode, problemSchema } from './problem.js';

/**
 * One route of either plane, described once. The plane's route file validates with these schemas,
 * and the plane's `/openapi.json` is generated from the same objects.
 */
export type AuthScheme = 'bearer' | 'apiKey' | 'internalSignature' | 'none';

export interface RouteContract {
  method: 'get' | 'post' | 'put' | 'delete';
  /** OpenAPI path template, e.g. `/api/v1/platforms/{platform_id}`. */
  path: string;
  operationId: string;
  summary: string;
  tag: string;
  /** Any one of the schemes is enough; `none` means public. */
  auth: readonly AuthScheme[];
  params?: z.ZodType;
  query?: z.ZodType;
  body?: z.ZodType;
  /** Multipart bodies are documented by their field list, since zod does not describe files. */
  multipart?: Record<string, { description: string; file?: boolean; multiple?: boolean; required?: boolean }>;
  /** The success response: status and schema (or HTML/other content). */
  success: { status: number; description: string; schema?: z.ZodType; contentType?: string; headers?: Record<string, string> };
  /** Problem codes this route can answer with, beyond the ones every route can. */
  problems: readonly ProblemCode[];
}

export const defineRoute = <const C extends RouteContract>(contract: C): C => contract;

/** Hono and Fastify spell path parameters `:name`. */
export const routerPath = (contract: Pick<RouteContract, 'path'>): string => contract.path.replace(/\{(\w+)\}/g, ':$1');

const ALWAYS: readonly ProblemCode[] = ['internal_error'];

/** Origin <-> edge calls (internal-auth.ts) are not part of the public document. */
const isInternal = (c: RouteContract) => c.auth.every((scheme) => scheme === 'internalSignature');

interface DocumentInfo {
  title: string;
  version: string;
  description: string;
}

/**
 * The document of a plane's public routes. Its description, rendered as Markdown by `/docs`, opens
 * with a table of contents (one link per tag, to the renderer's address for it) and ends with the
 * problem codes; each operation lists its own codes under their status.
 */
export function buildOpenApiDocument(info: DocumentInfo, served: readonly RouteContract[]): Record<string, unknown> {
  const contracts = served.filter((c) => !isInternal(c));
  const schemas: Record<string, unknown> = {};
  const toSchema = (schema: z.ZodType, io: 'input' | 'output'): unknown => {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' });
    // zod names registered schemas under $defs; OpenAPI keeps them under components.
    const {
      $defs,
      $schema: _,
      ...rest
    } = JSON.parse(JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/')) as {
      $defs?: Record<string, unknown>;
      $schema?: string;
    };
    Object.assign(schemas, $defs ?? {});
    return rest;
  };
  // Parameters are listed one by one, so a named (registered) parameters schema is read from components.
  const dereferenced = (json: unknown) => {
    const ref = (json as { $ref?: string }).$ref;
    return ref ? schemas[ref.replace('#/components/schemas/', '')] : json;
  };
  const problemRef = toSchema(problemSchema, 'output');

  const paths: Record<string, Record<string, unknown>> = {};
  for (const c of contracts) {
    const parameters: unknown[] = [];
    for (const [where, schema] of [
      ['path', c.params],
      ['query', c.query],
    ] as const) {
      if (!schema) continue;
      const json = dereferenced(toSchema(schema, 'input')) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, property] of Object.entries(json.properties ?? {})) {
        const { description } = property as { description?: string };
        parameters.push({
          name,
          in: where,
          required: where === 'path' || (json.required ?? []).includes(name),
          ...(description ? { description } : {}),
          schema: property,
        });
      }
    }
    const responses: Record<string, unknown> = {
      [c.success.status]: {
        description: c.success.description,
        ...(c.success.schema
          ? { content: { [c.success.contentType ?? 'application/json']: { schema: toSchema(c.success.schema, 'output') } } }
          : c.success.contentType
            ? { content: { [c.success.contentType]: {} } }
            : {}),
      },
    };
    const codesByStatus = new Map<number, ProblemCode[]>();
    for (const code of [...c.problems, ...ALWAYS]) {
      const status = PROBLEM_CODES[code].status;
      codesByStatus.set(status, [...(codesByStatus.get(status) ?? []), code]);
    }
    for (const [status, codes] of [...codesByStatus].sort(([a], [b]) => a - b)) {
      responses[status] = {
        description: codes.map((code) => `- \`${code}\`: ${PROBLEM_CODES[code].title}`).join('\n'),
        content: { 'application/problem+json': { schema: problemRef } },
      };
    }
    const security = c.auth.includes('none') ? [] : c.auth.map((scheme) => ({ [scheme]: [] }));
    const requestBody = c.body
      ? { required: true, content: { 'application/json': { schema: toSchema(c.body, 'input') } } }
      : c.multipart
        ? { required: true, content: { 'multipart/form-data': { schema: multipartSchema(c.multipart) } } }
        : undefined;
    paths[c.path] = {
      ...paths[c.path],
      [c.method]: {
        operationId: c.operationId,
        summary: c.summary,
        tags: [c.tag],
        security,
        ...(parameters.length ? { parameters } : {}),
        ...(requestBody ? { requestBody } : {}),
        responses,
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: { ...info, description: documentDescription(info.description, contracts) },
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}

function documentDescription(summary: string, contracts: readonly RouteContract[]): string {
  const tags = [...new Set(contracts.map((c) => c.tag))];
  const problems = Object.entries(PROBLEM_CODES).map(([code, { status, title }]) => `| \`${code}\` | ${status} | ${title} |`);
  return [
    summary,
    '',
    // Plain anchors to the renderer's element ids (Swagger UI writes a tag's spaces as `_`): it opens Markdown links in a new tab.
    `<nav aria-label="Contents"><b>Contents:</b> ${[...tags.map((tag) => `<a href="#operations-tag-${tag.trim().replace(/\s/g, '_')}">${tag}</a>`), '<a href="#problem-codes">problem codes</a>'].join(' · ')}</nav>`,
    '',
    "Every error is `application/problem+json` (RFC 9457) with a stable `code`; each operation lists the codes it can answer with under their status. Authentication: `bearer` is a user's access token (`POST /api/v1/auth/login` at the origin), `apiKey` a platform's key in `X-API-Key`.",
    '',
    '<h2 id="problem-codes">Problem codes</h2>',
    '',
    '| code | status | title |',
    '| --- | --- | --- |',
    ...problems,
  ].join('\n');
}

function multipartSchema(fields: NonNullable<RouteContract['multipart']>) {
  const properties: Record<string, unknown> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(fields)) {
    const item = field.file ? { type: 'string', format: 'binary' } : { type: 'string' };
    properties[name] = { description: field.description, ...(field.multiple ? { type: 'array', items: item } : item) };
    if (field.required) required.push(name);
  }
  return { type: 'object', properties, required };
}
