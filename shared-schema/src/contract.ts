import { z } from 'zod';
import { PROBLEM_CODES_ANCHOR, PROBLEM_CODES_EXTENSION } from './docs-anchors.js';
import { FIELD_DESCRIPTIONS } from './field-docs.js';
import { LICENSE_TOKEN_PREFIX } from './licenses.js';
import { BIOMETRIC_CONSENT_STATEMENT } from './pages.js';
import { API_KEY_PREFIX } from './platforms.js';
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
  /**
   * A public route that a page of another origin may call and read (`PUBLIC_CROSS_ORIGIN_HEADERS`):
   * the edge's playground checks a file at the origin. Only simple requests: no preflight is answered.
   */
  crossOrigin?: true;
}

/**
 * What a route's credentials let it answer, by scheme: missing credentials where some are required
 * (not on a route any caller may call without), and a bad token or key for each scheme it takes.
 * `defineRoute` adds them, so a contract lists only the problems of its own rules.
 */
const CREDENTIAL_PROBLEMS: Record<Exclude<AuthScheme, 'none'>, readonly ProblemCode[]> = {
  bearer: ['invalid_token'],
  apiKey: ['invalid_credentials'],
  internalSignature: ['invalid_signature'],
};

/** The problems the route's `auth` implies (CREDENTIAL_PROBLEMS), then its own. */
export function credentialProblems(auth: readonly AuthScheme[]): ProblemCode[] {
  const schemes = auth.filter((scheme): scheme is Exclude<AuthScheme, 'none'> => scheme !== 'none');
  const required: ProblemCode[] =
    schemes.length > 0 && !auth.includes('none') && !auth.includes('internalSignature') ? ['authentication_required'] : [];
  return [...required, ...schemes.flatMap((scheme) => CREDENTIAL_PROBLEMS[scheme])];
}

export const defineRoute = <const C extends RouteContract>(contract: C): C => ({
  ...contract,
  problems: [...new Set([...credentialProblems(contract.auth), ...contract.problems])],
});

/** The names of the `{parameters}` in a contract's path. */
export type PathParamName<P extends string> = P extends `${string}{${infer Name}}${infer Rest}` ? Name | PathParamName<Rest> : never;

/** A path with its `{parameters}` filled in, each URI-encoded; a missing or empty one is a TypeError, never a request. */
export function fillPath(template: string, params: Record<string, string> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined || value === '') throw new TypeError(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** A contract's path with its parameters, which the type requires by name when the path has any. */
export const pathOf = <C extends Pick<RouteContract, 'path'>>(
  contract: C,
  ...params: [PathParamName<C['path']>] extends [never] ? [] : [Record<PathParamName<C['path']>, string>]
): string => fillPath(contract.path, params[0]);

/** Hono and Fastify spell path parameters `:name`. */
export const routerPath = (contract: Pick<RouteContract, 'path'>): string => contract.path.replace(/\{(\w+)\}/g, ':$1');

/**
 * What every route of either plane can answer: the transport limits (a request target or headers
 * past `limits`, refused before any route runs: docs/CONTRACT.md#transport-errors) and a failure.
 */
const ALWAYS: readonly ProblemCode[] = ['uri_too_long', 'headers_too_large', 'internal_error'];

/**
 * The API's licence as the document states it: none is granted, as `client/package.json` says
 * (UNLICENSED); using the API is what an agreement with its operator allows. SPDX has no identifier
 * for "no licence", so it is named as SPDX names one of its own (`LicenseRef-`).
 */
const API_LICENSE = { name: 'Proprietary (UNLICENSED): use by agreement with the operator', identifier: 'LicenseRef-Proprietary' } as const;

/** Who may call an operation, said in its description, since the read-only reference offers no "Authorize" dialog. */
const AUTH_NOTES: Record<AuthScheme, string> = {
  bearer: "`bearer`: a user's access token (Authorization: Bearer)",
  apiKey: "`apiKey`: a platform's key in X-API-Key",
  internalSignature: 'the internal signature of the other plane',
  none: 'no credentials',
};
const authNote = (auth: readonly AuthScheme[]) => `Credentials: ${auth.map((scheme) => AUTH_NOTES[scheme]).join(', or ')}.`;

/**
 * The components an operation reaches, directly or through other components. A named parameters
 * schema is unfolded into the operation's parameters, so its own component is reached by nothing
 * and is left out.
 */
function reachableComponents(paths: unknown, schemas: Record<string, unknown>): Record<string, unknown> {
  const reached = new Set<string>();
  const pending = [paths];
  while (pending.length > 0) {
    for (const [, id] of JSON.stringify(pending.pop()).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (reached.has(id!)) continue;
      reached.add(id!);
      pending.push(schemas[id!]);
    }
  }
  return Object.fromEntries(Object.entries(schemas).filter(([id]) => reached.has(id)));
}

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
  /** A media type's schema with its example, made from the same schema (components resolved when read). */
  const withExample = (schema: unknown) => ({ schema, example: exampleOf(schema, schemas) });

  const paths: Record<string, Record<string, unknown>> = {};
  for (const c of contracts) {
    const parameters: unknown[] = [];
    const explained = (json: unknown) => explainSchema(json, c.operationId);
    for (const [where, schema] of [
      ['path', c.params],
      ['query', c.query],
    ] as const) {
      if (!schema) continue;
      const json = dereferenced(toSchema(schema, 'input')) as { properties?: Record<string, unknown>; required?: string[] };
      for (const [name, property] of Object.entries(json.properties ?? {})) {
        const { description = describeField(c.operationId, name) } = property as { description?: string };
        parameters.push({
          name,
          in: where,
          required: where === 'path' || (json.required ?? []).includes(name),
          ...(description ? { description } : {}),
          schema: explained(property),
        });
      }
    }
    const responses: Record<string, unknown> = {
      [c.success.status]: {
        description: c.success.description,
        ...(c.success.schema
          ? { content: { [c.success.contentType ?? 'application/json']: withExample(explained(toSchema(c.success.schema, 'output'))) } }
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
        content: { 'application/problem+json': { schema: problemRef, example: problemExample(codes[0]!, c.path) } },
      };
    }
    const security = c.auth.includes('none') ? [] : c.auth.map((scheme) => ({ [scheme]: [] }));
    const requestBody = c.body
      ? { required: true, content: { 'application/json': withExample(explained(toSchema(c.body, 'input'))) } }
      : c.multipart
        ? { required: true, content: { 'multipart/form-data': withExample(multipartSchema(c.multipart)) } }
        : undefined;
    paths[c.path] = {
      ...paths[c.path],
      [c.method]: {
        operationId: c.operationId,
        summary: c.summary,
        description: authNote(c.auth),
        tags: [c.tag],
        security,
        ...(parameters.length ? { parameters } : {}),
        ...(requestBody ? { requestBody } : {}),
        responses,
      },
    };
  }
  for (const [id, schema] of Object.entries(schemas)) explainSchema(schema, id);
  return {
    openapi: '3.1.0',
    info: { ...info, description: documentDescription(info.description, contracts), license: API_LICENSE },
    // Each plane serves its own document: its operations are at the address the document came from.
    servers: [{ url: '/', description: 'This plane, at the address this document is served from' }],
    // Drawn by `/docs` after the operations (docs-browser/main.ts): the reference reads operations first.
    [PROBLEM_CODES_EXTENSION]: problemCodesTable(),
    paths,
    components: {
      schemas: reachableComponents(paths, schemas),
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
      },
    },
  };
}

function documentDescription(summary: string, contracts: readonly RouteContract[]): string {
  const tags = [...new Set(contracts.map((c) => c.tag))];
  return [
    summary,
    '',
    // Plain anchors to the renderer's element ids (Swagger UI writes a tag's spaces as `_`): it opens Markdown links in a new tab.
    `<nav aria-label="Contents"><b>Contents:</b> ${[...tags.map((tag) => `<a href="#operations-tag-${tag.trim().replace(/\s/g, '_')}">${tag}</a>`), `<a href="#${PROBLEM_CODES_ANCHOR}">problem codes</a>`].join(' · ')}</nav>`,
    '',
    "Every error is `application/problem+json` (RFC 9457) with a stable `code`; each operation lists the codes it can answer with under their status, and the problem codes follow the operations. Authentication: `bearer` is a user's access token (`POST /api/v1/auth/login` at the origin), `apiKey` a platform's key in `X-API-Key`.",
  ].join('\n');
}

function problemCodesTable(): string {
  const problems = Object.entries(PROBLEM_CODES).map(([code, { status, title }]) => `| \`${code}\` | ${status} | ${title} |`);
  return ['| code | status | title |', '| --- | --- | --- |', ...problems].join('\n');
}

/** What an answer with this code looks like (its detail is the title: the real one says more about the request). */
function problemExample(code: ProblemCode, path: string) {
  const { status, title } = PROBLEM_CODES[code];
  return { type: `urn:vip:problem:${code}`, title, status, detail: title, instance: path, code, request_id: EXAMPLE_VALUES.request_id };
}

const describeField = (context: string, field: string): string | undefined =>
  FIELD_DESCRIPTIONS[`${context}.${field}`] ?? FIELD_DESCRIPTIONS[field];

type JsonSchema = {
  $ref?: string;
  description?: string;
  format?: string;
  pattern?: string;
  properties?: Record<string, JsonSchema>;
  [keyword: string]: unknown;
};
const SUBSCHEMA_KEYWORDS = ['items', 'anyOf', 'oneOf', 'allOf', 'additionalProperties', 'prefixItems'] as const;

/**
 * Makes a generated schema read well, in place: every property gets its line from FIELD_DESCRIPTIONS
 * (unless the zod schema gave one), and a string with a named format (`uuid`, `date-time`, `email`)
 * is shown by that name, without the long regular expression zod also writes for it.
 * `context` is the component id or operationId the schema belongs to.
 */
function explainSchema<T>(json: T, context: string): T {
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const schema = node as JsonSchema;
    if (schema.format && schema.pattern) delete schema.pattern;
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const description = property.description ?? describeField(context, name);
      if (description) property.description = description;
      visit(property);
    }
    for (const keyword of SUBSCHEMA_KEYWORDS) visit(schema[keyword]);
  };
  visit(json);
  return json;
}

/**
 * Values for fields whose schema alone makes a poor example: a pattern no generator reads, a
 * number whose range says little, a name a reader should recognise. Everything else is made from
 * the schema (its enum, const, format, bounds), so an example never drifts from what is accepted.
 */
const EXAMPLE_DIGEST = '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08';
const EXAMPLE_UUID = '3f2c8a5e-9b1d-4c7e-8a2f-6d4b1e9c0a57';
const EXAMPLE_TIME = '2026-01-15T09:30:00.000Z';
const EXAMPLE_VALUES: Record<string, unknown> = {
  platform_name: 'Acme Voices',
  name: 'Studio narrator',
  api_key: `${API_KEY_PREFIX}4b1f0c9e7d2a48c6b3e5f17a90d2c6e8`,
  license_token: `${LICENSE_TOKEN_PREFIX}q8Xr2mV0bT5nL7cJ9wE3yH1kP6sD4fG0aZ2uR8iO5tY`,
  secret: 'whsec_ZXhhbXBsZS1zZWNyZXQtZm9yLXRoZS1kb2NzIQ==',
  head_hash: EXAMPLE_DIGEST,
  prev_hash: EXAMPLE_DIGEST,
  entry_hash: EXAMPLE_DIGEST,
  fingerprint_sha256: EXAMPLE_DIGEST,
  license_terms_sha256: EXAMPLE_DIGEST,
  description: 'Narration of the children’s audiobook series “Harbour Lights” (English), sold as downloads and streamed.',
  compensation: 'A session fee of 800 EUR per finished hour and 10% of net receipts.',
  embedding1_hash: `sha256:${EXAMPLE_DIGEST}`,
  embedding2_hash: `sha256:${EXAMPLE_DIGEST}`,
  email: 'owner@example.com',
  password: 'correct horse battery staple',
  current_password: 'correct horse battery staple',
  new_password: 'a new and longer passphrase',
  url: 'https://platform.example/webhooks/vip',
  request_id: '0f8d2c41-6b7a-4e15-9c3d-2a5e8b1f7c90',
  statement_version: BIOMETRIC_CONSENT_STATEMENT.version,
  speech_seconds: 17.7,
  duration_seconds: 25.6,
  message: 'We would like to narrate a children’s audiobook series with this voice.',
  certificate_pem: '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU…\n-----END CERTIFICATE-----\n',
  not_before: '2026-01-01T00:00:00.000Z',
  not_after: '2028-01-01T00:00:00.000Z',
  // A watermark id (a pattern no generator reads): the redeem answer's and a verification's `id`.
  id: '5a3c0e91b7',
  watermark_id: '5a3c0e91b7',
  // Strings in SigningCertificate, without a format to read the example from.
  created_at: EXAMPLE_TIME,
  revoked_at: EXAMPLE_TIME,
};
const EXAMPLE_BY_FORMAT: Record<string, unknown> = {
  uuid: EXAMPLE_UUID,
  'date-time': EXAMPLE_TIME,
  email: EXAMPLE_VALUES.email,
  uri: EXAMPLE_VALUES.url,
  binary: '(an audio file: WAV, FLAC, MP3 or OGG)',
};

/** An example value of a generated schema; `$ref`s are read from `components`. */
function exampleOf(node: unknown, components: Record<string, unknown>, field?: string): unknown {
  const schema = node as JsonSchema & {
    const?: unknown;
    enum?: unknown[];
    examples?: unknown[];
    default?: unknown;
    type?: string | string[];
    minimum?: number;
    maximum?: number;
    minLength?: number;
    minItems?: number;
    items?: unknown;
    anyOf?: unknown[];
    oneOf?: unknown[];
    allOf?: unknown[];
    required?: string[];
  };
  if (schema.$ref) return exampleOf(components[schema.$ref.replace('#/components/schemas/', '')], components, field);
  if (schema.examples?.length) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  if (field && field in EXAMPLE_VALUES && schema.type !== 'object' && schema.type !== 'array') return EXAMPLE_VALUES[field];
  const choices = schema.anyOf ?? schema.oneOf;
  if (choices) {
    const notNull = choices.find((choice) => (choice as { type?: string }).type !== 'null') ?? choices[0];
    return exampleOf(notNull, components, field);
  }
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part) => exampleOf(part, components, field)));
  if (schema.format && schema.format in EXAMPLE_BY_FORMAT) return EXAMPLE_BY_FORMAT[schema.format];
  if (schema.default !== undefined) return schema.default;
  const type = Array.isArray(schema.type) ? schema.type.find((each) => each !== 'null') : schema.type;
  switch (type) {
    case 'object': {
      const properties = schema.properties ?? {};
      return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, exampleOf(property, components, name)]));
    }
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => exampleOf(schema.items, components, field));
    case 'integer':
    case 'number':
      return Math.min(Math.max(schema.minimum ?? 1, 1), schema.maximum ?? Number.MAX_SAFE_INTEGER);
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'string':
      return 'text'.padEnd(schema.minLength ?? 0, '.');
    default:
      return {};
  }
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
