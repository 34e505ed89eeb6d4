import { z } from 'zod';
import { GATE_VARIANTS } from './enums.js';

/**
 * Health answers for probes (load balancers, orchestrators). They say whether a plane can serve and
 * nothing more: no versions, no settings, nothing about voices.
 */

/** `GET /` of either plane: a pointer to its reference, for a person who opens the bare address. */
export const serviceIndexSchema = z
  .object({ service: z.string(), docs: z.literal('/docs'), openapi: z.literal('/openapi.json') })
  .meta({ id: 'ServiceIndex', description: 'Where the human-readable reference (`docs`) and the OpenAPI document are.' });
export type ServiceIndex = z.infer<typeof serviceIndexSchema>;

/**
 * `INSTANCE_ID` as the process was started with it, absent where none was set: `npm start` gives each
 * plane a new random one and waits for it here, so another service already on the port (or an older
 * start) is never taken for the one it just launched. It names a start, nothing about the deployment.
 */
const instanceField = z
  .string()
  .optional()
  .describe('The `INSTANCE_ID` this process was started with (absent when none was set); launchers tell their own process by it.');

export const originLivenessSchema = z.object({ status: z.literal('ok'), instance: instanceField }).meta({ id: 'Liveness' });

export const edgeLivenessSchema = z
  .object({ status: z.literal('ok'), variant: z.enum(GATE_VARIANTS), instance: instanceField })
  .meta({ id: 'EdgeLiveness', description: 'The Worker serves; `variant` is the deployed gate variant.' });
export type EdgeLiveness = z.infer<typeof edgeLivenessSchema>;

export const readinessSchema = z
  .object({
    status: z.literal('ready'),
    checks: z.object({
      database: z.literal('ok'),
      /** Absent where the process runs no voiceprint engine. */
      voiceprint: z
        .object({
          busy: z.number().int().nonnegative().describe('Audio files being processed now'),
          queued: z.number().int().nonnegative().describe('Audio files waiting for a worker thread'),
        })
        .optional(),
    }),
  })
  .meta({ id: 'Readiness', description: 'The database answered; the voiceprint load, where this process runs the engine.' });
export type Readiness = z.infer<typeof readinessSchema>;
