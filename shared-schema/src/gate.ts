import { z } from 'zod';
import { isoTimestamp, uuid } from './common.js';
import { BLOCK_REASONS, INTENDED_USES } from './enums.js';
import { platformName } from './identity.js';

/** Spec 2.4. Unknown fields are refused (422). */
export const preSynthesisCheckRequestSchema = z
  .strictObject({
    voice_id: uuid,
    platform_name: platformName,
    intended_use: z.enum(INTENDED_USES),
    license_token: z.string().min(1).max(512).optional(),
  })
  .meta({ id: 'PreSynthesisCheckRequest' });
export type PreSynthesisCheckRequest = z.infer<typeof preSynthesisCheckRequestSchema>;

/** Spec 2.5, approved. `authorization_token` is Variant A; `approval_token` the alias (A) or only field (B). */
export const approvedResultSchema = z
  .object({
    status: z.literal('approved'),
    authorization_token: z.string().optional(),
    approval_token: z.string().optional(),
    voice_id: uuid,
    consented: z.literal(true),
    licensed: z.literal(true),
    expires_at: isoTimestamp,
    check_id: uuid,
  })
  .meta({ id: 'ApprovedResult' });

export const blockedResultSchema = z
  .object({
    status: z.literal('blocked'),
    action: z.literal('authorization_denied'),
    reason: z.enum(BLOCK_REASONS),
    voice_id: uuid,
    license_url: z.string(),
    check_id: uuid,
    authorization_denied: z.literal(true),
  })
  .meta({ id: 'BlockedResult' });

export const noRegistryRecordResultSchema = z
  .object({
    action: z.literal('no_registry_record'),
    platform_decision_required: z.literal(true),
    voice_id: z.null(),
    check_id: uuid,
  })
  .meta({ id: 'NoRegistryRecordResult' });

export const preSynthesisCheckResultSchema = z
  .union([approvedResultSchema, blockedResultSchema, noRegistryRecordResultSchema])
  .meta({ id: 'PreSynthesisCheckResult' });
export type PreSynthesisCheckResult = z.infer<typeof preSynthesisCheckResultSchema>;
