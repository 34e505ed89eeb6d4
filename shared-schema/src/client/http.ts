import type { z } from 'zod';
import { fillPath, type RouteContract } from '../contract.js';
import { REQUEST_ID_HEADER } from '../http.js';
import { problemSchema } from '../problem.js';
import { ContractError, ProblemError, parseRateLimit, type RateLimitInfo } from './errors.js';

/**
 * One call of a route contract over fetch: the path is filled from the contract's template, the
 * answer is parsed with the contract's success schema or the problem schema, and anything else is
 * a ContractError. Every type here is read off the contracts, so a renamed field is a compile
 * error for callers and a runtime error for a deployed service that drifted.
 */

/** A contract whose success answer is JSON described by a schema. */
export type JsonRoute = RouteContract & { success: { schema: z.ZodType } };
export type ResultOf<C extends JsonRoute> = z.output<C['success']['schema']>;
export type BodyOf<C extends RouteContract> = C extends { body: infer B extends z.ZodType } ? z.input<B> : never;
export type ParamsOf<C extends RouteContract> = C extends { params: infer P extends z.ZodType } ? z.input<P> : never;
export type QueryOf<C extends RouteContract> = C extends { query: infer Q extends z.ZodType } ? z.input<Q> : never;

/** Per-call options. */
export interface CallOptions {
  signal?: AbortSignal;
  /** Sent as `x-request-id` (8 to 128 of `[A-Za-z0-9._:-]`), so the service's logs and problems carry your id. */
  requestId?: string;
  headers?: Record<string, string>;
}

/** What `onResponse` sees after every answer, success or problem. */
export interface ResponseInfo {
  operationId: string;
  status: number;
  requestId: string | null;
  rateLimit: RateLimitInfo | null;
  headers: Headers;
}

/** A credential source: a fixed string or a function (for tokens that are refreshed). */
export type TokenSource = string | (() => string | Promise<string>);

export interface Transport {
  baseUrl: string;
  fetch: typeof fetch;
  apiKey?: string;
  bearerToken?: TokenSource;
  headers?: Record<string, string>;
  onResponse?: (info: ResponseInfo) => void;
}

export interface CallInput {
  params?: Record<string, string>;
  query?: Record<string, unknown>;
  /** JSON-serialised unless it is FormData (then fetch writes the multipart boundary). */
  body?: unknown;
}

/** What both clients are made from: where the plane is, and at most one credential. */
export type ClientOptions = {
  /** The plane's address, e.g. `https://gate.example.com` (no `/api/v1`: the paths carry it). */
  baseUrl: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
  /** Sent on every call. */
  headers?: Record<string, string>;
  /** Called after every answer, with its status, request id and rate-limit headers. */
  onResponse?: (info: ResponseInfo) => void;
} & (
  | { apiKey: string; bearerToken?: never }
  | { bearerToken: TokenSource; apiKey?: never }
  | { apiKey?: undefined; bearerToken?: undefined }
);

export function createTransport(options: ClientOptions): Transport {
  if (options.apiKey !== undefined && options.bearerToken !== undefined) {
    throw new TypeError('give apiKey or bearerToken, not both');
  }
  return {
    baseUrl: normaliseBaseUrl(options.baseUrl),
    fetch: options.fetch ?? ((input, init) => fetch(input, init)),
    apiKey: options.apiKey,
    bearerToken: options.bearerToken,
    headers: options.headers,
    onResponse: options.onResponse,
  };
}

export function normaliseBaseUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new TypeError(`baseUrl must be http(s): ${baseUrl}`);
  return url.toString().replace(/\/+$/, '');
}

function queryString(query: Record<string, unknown> | undefined): string {
  if (!query) return '';
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : '';
}

async function authHeaders(transport: Transport): Promise<Record<string, string>> {
  if (transport.apiKey !== undefined) return { 'x-api-key': transport.apiKey };
  if (transport.bearerToken !== undefined) {
    const token = typeof transport.bearerToken === 'string' ? transport.bearerToken : await transport.bearerToken();
    return { authorization: `Bearer ${token}` };
  }
  return {};
}

export async function callRoute<C extends JsonRoute>(
  transport: Transport,
  contract: C,
  input: CallInput = {},
  options: CallOptions = {},
): Promise<ResultOf<C>> {
  const url = `${transport.baseUrl}${fillPath(contract.path, input.params)}${queryString(input.query)}`;
  const headers: Record<string, string> = {
    accept: 'application/json, application/problem+json',
    ...transport.headers,
    ...(contract.auth.includes('none') ? {} : await authHeaders(transport)),
    ...options.headers,
  };
  if (options.requestId !== undefined) headers[REQUEST_ID_HEADER] = options.requestId;
  let body: RequestInit['body'];
  if (input.body instanceof FormData) {
    body = input.body;
  } else if (input.body !== undefined) {
    body = JSON.stringify(input.body);
    headers['content-type'] = 'application/json';
  }

  const response = await transport.fetch(url, { method: contract.method.toUpperCase(), headers, body, signal: options.signal });
  const text = await response.text();
  transport.onResponse?.({
    operationId: contract.operationId,
    status: response.status,
    requestId: response.headers.get(REQUEST_ID_HEADER),
    rateLimit: parseRateLimit(response.headers),
    headers: response.headers,
  });

  const drift = (why: string, issues: readonly z.core.$ZodIssue[] = []) =>
    new ContractError(
      `${contract.operationId}: ${why} (HTTP ${response.status})`,
      contract.operationId,
      response.status,
      issues,
      text.slice(0, 500),
    );
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw drift('the answer is not JSON');
  }

  if (response.ok) {
    if (response.status !== contract.success.status) throw drift(`expected HTTP ${contract.success.status}`);
    const parsed = contract.success.schema.safeParse(json);
    if (!parsed.success) throw drift('the answer does not match the success schema', parsed.error.issues);
    return parsed.data as ResultOf<C>;
  }
  const problem = problemSchema.safeParse(json);
  if (!problem.success) throw drift('the error answer is not a problem of shared-schema/src/problem.ts', problem.error.issues);
  if (problem.data.status !== response.status) throw drift(`the problem says status ${problem.data.status}`);
  throw new ProblemError(problem.data, response.headers);
}
