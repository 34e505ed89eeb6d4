import { defineRoute } from '../../contract.js';
import { serviceIndexSchema } from '../../health.js';

/** Served by origin/src/http/docs.ts: the origin's API reference and the document it renders. */

export const originOpenApiRoute = defineRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'originOpenApi',
  summary: 'This OpenAPI 3.1 document',
  tag: 'meta',
  auth: ['none'],
  success: { status: 200, description: 'OpenAPI document', contentType: 'application/json' },
  problems: [],
});

export const originIndexRoute = defineRoute({
  method: 'get',
  path: '/',
  operationId: 'originIndex',
  summary: 'Points to the API reference (`/docs`) and the OpenAPI document',
  tag: 'meta',
  auth: ['none'],
  success: { status: 200, description: 'Where the reference is', schema: serviceIndexSchema },
  problems: [],
});

export const originDocsRoute = defineRoute({
  method: 'get',
  path: '/docs',
  operationId: 'originDocs',
  summary: 'Readable API reference',
  tag: 'meta',
  auth: ['none'],
  success: { status: 200, description: 'HTML page', contentType: 'text/html' },
  problems: [],
});
