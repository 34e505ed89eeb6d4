import { defineRoute } from '../../contract.js';
import { originLivenessSchema, readinessSchema } from '../../health.js';

/** Probes for whatever runs the origin: public, no I/O for liveness, one short query for readiness. */

export const originLivenessRoute = defineRoute({
  method: 'get',
  path: '/healthz',
  operationId: 'originLiveness',
  summary: 'Liveness: the process serves HTTP (touches nothing else)',
  tag: 'health',
  auth: ['none'],
  success: { status: 200, description: 'Serving', schema: originLivenessSchema },
  problems: [],
});

export const originReadinessRoute = defineRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'originReadiness',
  summary: 'Readiness: the database answers `select 1` within two seconds; 503 unavailable otherwise',
  tag: 'health',
  auth: ['none'],
  success: { status: 200, description: 'Ready to take requests', schema: readinessSchema },
  problems: ['unavailable'],
});
