import { limits } from '@vip/shared-schema';
import {
  decideVoiceReviewRoute,
  deleteVoiceRoute,
  enrollVoiceRoute,
  listVoiceDisputesRoute,
  listVoiceReviewsRoute,
  listVoicesRoute,
  measureRecordingsRoute,
  openVoiceDisputeRoute,
  reenrollVoiceRoute,
} from '@vip/shared-schema/routes/origin/voices';
import { principalOf } from '../auth/index.js';
import { readMultipartForm } from '../http/multipart-form.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { VoiceDisputeService } from './disputes.js';
import type { VoiceReviewService } from './reviews.js';
import type { VoiceService } from './service.js';

/** Call inside a scope that has @fastify/multipart registered (see server.ts). */
export function registerVoiceRoutes({ app, registry, guards }: RouteKit, voices: VoiceService, disputes: VoiceDisputeService): void {
  addRoute(app, registry, enrollVoiceRoute, {
    guards: [guards.bearer],
    handler: async (_input, request) => {
      const form = await readMultipartForm(request, {
        files: { audio: { maxCount: limits.enrollMaxFiles }, spoken_consent: { maxCount: 1 } },
        fields: ['name', 'consent_id', 'challenge_id'],
      });
      return voices.enroll(principalOf(request), form);
    },
  });

  addRoute(app, registry, measureRecordingsRoute, {
    guards: [guards.bearer],
    handler: async (_input, request) => {
      const form = await readMultipartForm(request, { files: { audio: { maxCount: limits.enrollMaxFiles } }, fields: [] });
      return voices.measure(form);
    },
  });

  addRoute(app, registry, reenrollVoiceRoute, {
    guards: [guards.bearer],
    handler: async ({ params }, request) => {
      const form = await readMultipartForm(request, {
        files: { audio: { maxCount: limits.enrollMaxFiles }, spoken_consent: { maxCount: 1 } },
        fields: ['challenge_id'],
      });
      return voices.reenroll(principalOf(request), params.voice_id, form);
    },
  });

  addRoute(app, registry, listVoicesRoute, {
    guards: [guards.bearer],
    handler: ({ query }, request) => voices.list(principalOf(request), query),
  });

  addRoute(app, registry, deleteVoiceRoute, {
    guards: [guards.bearer],
    handler: ({ params }, request) => voices.delete(principalOf(request), params.voice_id),
  });

  addRoute(app, registry, openVoiceDisputeRoute, {
    guards: [guards.bearer],
    handler: async (_input, request) => {
      const form = await readMultipartForm(request, {
        files: { audio: { maxCount: limits.enrollMaxFiles }, spoken_consent: { maxCount: 1 } },
        fields: ['name', 'consent_id', 'challenge_id'],
      });
      return disputes.open(principalOf(request), form);
    },
  });

  addRoute(app, registry, listVoiceDisputesRoute, {
    guards: [guards.bearer],
    handler: ({ query }, request) => disputes.list(principalOf(request), query),
  });
}

/** The administrators' review of held enrollments (JSON routes). */
export function registerVoiceReviewRoutes({ app, registry, guards }: RouteKit, reviews: VoiceReviewService): void {
  addRoute(app, registry, listVoiceReviewsRoute, {
    guards: guards.admin,
    handler: ({ query }) => reviews.list(query),
  });

  addRoute(app, registry, decideVoiceReviewRoute, {
    guards: guards.admin,
    handler: ({ params, body }, request) => reviews.decide(principalOf(request), params.voice_id, body.decision),
  });
}
