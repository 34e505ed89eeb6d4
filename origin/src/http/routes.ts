import { limits, PUBLIC_CROSS_ORIGIN_HEADERS, type RouteContract, routerPath, validationProblem } from '@vip/shared-schema';
import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { z } from 'zod';

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route serves an HTML page (its contract's success content type). */
    htmlPage?: boolean;
  }
}
export interface RouteInput<C extends RouteContract> {
  body: Parsed<C['body']>;
  params: Parsed<C['params']>;
  query: Parsed<C['query']>;
}

type SuccessBody<C extends RouteContract> = C['success']['schema'] extends z.ZodType ? z.input<C['success']['schema']> : unknown;

export interface RouteOptions<C extends RouteContract> {
  /** Runs before validation, so an unauthenticated caller learns nothing about the request shape. */
  guards?: preHandlerAsyncHookHandler[];
  /** `reply` only for headers that depend on the call (a rate limit's); the status and body are the contract's. */
  handler: (input: RouteInput<C>, request: FastifyRequest, reply: FastifyReply) => Promise<SuccessBody<C>> | SuccessBody<C>;
  /** Sent with every success (caching, mostly). */
  headers?: Record<string, string>;
  /**
   * The router's URL where the contract's OpenAPI path cannot say it: ending in a wildcard (`*`, which
   * takes slashes) that stands for the contract path's last parameter.
   */
  url?: string;
}

/**
 * The longest path parameter any route accepts, as Fastify's router measures it: after
 * percent-decoding, so a name's encoding does not count against it. It is a platform name; every
 * other parameter is a UUID, and the tlog tile is a wildcard, which the router does not measure.
 */
export const PATH_PARAMETER_MAX_LENGTH = limits.platformNameMaxLength;

/** Every contract registered on the app, in order; /openapi.json is generated from this list. */
export type ContractRegistry = RouteContract[];

/** The checks a route can run before it reads its input; built once, by `createGuards` in auth/guard.ts. */
export interface Guards {
  /** Any valid access token. */
  bearer: preHandlerAsyncHookHandler;
  /** A valid access token of an admin. */
  admin: preHandlerAsyncHookHandler[];
  /** A platform's API key (X-API-Key without an Authorization header) or, failing that, an access token. */
  platformOrUser: preHandlerAsyncHookHandler;
  /** A platform's API key and nothing else: any other credential is 403. */
  platformKey: preHandlerAsyncHookHandler;
  /** platformOrUser when credentials are sent; a request without any passes as anonymous. */
  platformUserOrAnonymous: preHandlerAsyncHookHandler;
}

/**
 * What every route registrar takes (with the services it serves): the app or scope to mount on,
 * the contract registry, the guards. Registrars never see the database; services do.
 */
export interface RouteKit {
  app: FastifyInstance;
  registry: ContractRegistry;
  guards: Guards;
}

/**
 * Serves one route of a contract: the contract's zod schemas are the only validation, and the
 * handler's return value is sent with the contract's success status.
 */
export function addRoute<C extends RouteContract>(
  app: FastifyInstance,
  registry: ContractRegistry,
  contract: C,
  options: RouteOptions<C>,
): void {
  registry.push(contract);
  const wildcardParameter = options.url?.endsWith('*') ? /\{(\w+)\}$/.exec(contract.path)?.[1] : undefined;
  const paramsOf = (request: FastifyRequest) =>
    wildcardParameter ? { [wildcardParameter]: (request.params as Record<string, string>)['*'] } : request.params;
  app.route({
    method: contract.method.toUpperCase() as Uppercase<C['method']>,
    url: options.url ?? routerPath(contract),
    // Read by the error handler: a browser on an HTML route gets its errors as a page too.
    config: { htmlPage: contract.success.contentType?.startsWith('text/html') ?? false },
    // Set first, so that every answer a page of another origin gets, a problem too, is readable there.
    onRequest: contract.crossOrigin
      ? async (_request, reply) => {
          reply.headers(PUBLIC_CROSS_ORIGIN_HEADERS);
        }
      : [],
    preHandler: options.guards ?? [],
    handler: async (request, reply) => {
      const input = {
        params: parse(contract.params, paramsOf(request), 'params'),
        query: parse(contract.query, request.query, 'query'),
        // A request without a body is read as an empty object, so missing fields are named one by one.
        body: parse(contract.body, request.body ?? {}, 'body'),
      } as RouteInput<C>;
      const result = await options.handler(input, request, reply);
      reply.code(contract.success.status);
      if (contract.success.contentType) reply.type(contract.success.contentType);
      if (options.headers) reply.headers(options.headers);
      return result;
    },
  });
}

function parse(schema: z.ZodType | undefined, value: unknown, where: 'body' | 'query' | 'params'): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) throw validationProblem(result.error.issues, where);
  const nul = pathOfNul(result.data, []);
  if (nul) throw validationProblem([{ code: 'custom', path: nul, message: 'must not contain NUL characters', input: undefined }], where);
  return result.data;
}

/**
 * Postgres text cannot hold U+0000, so a string carrying one would fail in the database as a 500.
 * Refused here, once for every route, naming the field.
 */
function pathOfNul(value: unknown, path: PropertyKey[]): PropertyKey[] | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = pathOfNul(item, [...path, index]);
      if (found) return found;
    }
  } else if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    for (const [key, item] of Object.entries(value)) {
      const found = pathOfNul(item, [...path, key]);
      if (found) return found;
    }
  }
  return null;
}
