import {
  depositManifestRoute,
  listSigningCertificatesRoute,
  manifestRoute,
  registerSigningCertificateRoute,
  revokeSigningCertificateRoute,
  softBindingAlgorithmsRoute,
  softBindingByBindingRoute,
  softBindingByContentRoute,
  verifyProvenanceRoute,
} from '@vip/shared-schema/routes/origin/provenance';
import type { FastifyRequest } from 'fastify';
import { callerOf } from '../auth/index.js';
import { readMultipartForm } from '../http/multipart-form.js';
import { addRoute, type RouteKit } from '../http/routes.js';
import type { SigningCertificateService } from './certificates.js';
import type { ProvenanceService, VerifyCaller } from './service.js';
import type { SoftBindingService } from './soft-binding.js';

const verifyCallerOf = (request: FastifyRequest): VerifyCaller =>
  request.platformName !== undefined || request.principal !== undefined ? callerOf(request) : { kind: 'anonymous', ip: request.ip };

/** Call inside a scope that has @fastify/multipart registered (see server.ts). */
export function registerProvenanceVerifyRoute({ app, registry, guards }: RouteKit, provenance: ProvenanceService): void {
  addRoute(app, registry, verifyProvenanceRoute, {
    guards: [guards.platformUserOrAnonymous],
    handler: async (_input, request) => {
      const caller = verifyCallerOf(request);
      await provenance.admit(caller);
      const form = await readMultipartForm(request, { files: { audio: { maxCount: 1 } }, fields: [] });
      return provenance.verify(caller, form);
    },
  });
}

export function registerSigningCertificateRoutes({ app, registry, guards }: RouteKit, certificates: SigningCertificateService): void {
  addRoute(app, registry, registerSigningCertificateRoute, {
    guards: [guards.platformOrUser],
    handler: ({ body }, request) => certificates.register(callerOf(request), body),
  });
  addRoute(app, registry, listSigningCertificatesRoute, {
    guards: [guards.platformOrUser],
    handler: ({ query }, request) => certificates.list(callerOf(request), query.platform_name),
  });
  addRoute(app, registry, revokeSigningCertificateRoute, {
    guards: [guards.platformOrUser],
    handler: ({ params }, request) => certificates.revoke(callerOf(request), params.certificate_id),
  });
}

/** The soft-binding API's uploads (lookup by content, a manifest's deposit): inside the multipart scope. */
export function registerSoftBindingUploadRoutes({ app, registry, guards }: RouteKit, softBinding: SoftBindingService): void {
  addRoute(app, registry, softBindingByContentRoute, {
    guards: [guards.platformUserOrAnonymous],
    handler: async ({ query }, request) => {
      const caller = verifyCallerOf(request);
      await softBinding.admit(caller);
      const form = await readMultipartForm(request, { files: { audio: { maxCount: 1 } }, fields: [] });
      return softBinding.byContent(caller, form, query);
    },
  });
  addRoute(app, registry, depositManifestRoute, {
    guards: [guards.platformKey],
    handler: async (_input, request) => {
      const form = await readMultipartForm(request, { files: { manifest: { maxCount: 1 } }, fields: ['watermark_id'] });
      return softBinding.deposit(callerOf(request), form);
    },
  });
}

/** The C2PA soft-binding resolution API's reads (docs/CONTRACT.md#the-soft-binding-resolution-api). */
export function registerSoftBindingRoutes({ app, registry, guards }: RouteKit, softBinding: SoftBindingService): void {
  addRoute(app, registry, softBindingByBindingRoute, {
    guards: [guards.platformUserOrAnonymous],
    handler: async ({ query }, request) => {
      const caller = verifyCallerOf(request);
      await softBinding.admit(caller);
      return softBinding.byBinding(caller, query);
    },
  });
  addRoute(app, registry, softBindingAlgorithmsRoute, { handler: () => softBinding.supportedAlgorithms() });
  addRoute(app, registry, manifestRoute, {
    guards: [guards.platformUserOrAnonymous],
    handler: async ({ params }, request) => {
      await softBinding.admit(verifyCallerOf(request));
      return softBinding.manifest(params.manifestId);
    },
  });
}
