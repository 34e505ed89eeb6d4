import { z } from 'zod';
import { uuid } from './common.js';
import { CONSENT_STATUSES } from './enums.js';

/** A voice's synthesis consent, which the gate judges by (its route: routes/origin/registry/synthesis-consent.ts). */

/** `unknown` is where a voice starts; an owner can only grant or withdraw. */
export const setConsentRequestSchema = z.strictObject({ status: z.enum(['active', 'withdrawn']) }).meta({ id: 'SetConsentRequest' });
export const voiceConsentSchema = z.object({ voice_id: uuid, consent_status: z.enum(CONSENT_STATUSES) }).meta({ id: 'VoiceConsent' });
