import { defineRoute } from '../../../contract.js';
import { licensingPageQuerySchema } from '../../../licenses.js';

/** Served by origin/src/registry/licensing-page/: the public page the gate's `license_url` points at. */

export const licensingPageRoute = defineRoute({
  method: 'get',
  path: '/licensing',
  operationId: 'licensingPage',
  summary: "Public page of a registered voice: the uses on offer and how a platform obtains a licence (the gate's license_url)",
  tag: 'licenses',
  auth: ['none'],
  query: licensingPageQuerySchema,
  success: { status: 200, description: 'HTML page', contentType: 'text/html; charset=utf-8' },
  problems: ['validation_failed', 'not_found'],
});
