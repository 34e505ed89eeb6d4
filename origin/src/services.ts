import { DEFAULT_TLOG_ORIGIN } from '@vip/shared-schema';
import type { CheckpointSigner } from './audit/checkpoints.js';
import { AuditService } from './audit/service.js';
import { TransparencyLog } from './audit/tlog-service.js';
import type { AccessTokens } from './auth/access-tokens.js';
import type { PasswordHasher } from './auth/passwords.js';
import { AuthService } from './auth/service.js';
import { BiometricConsentService } from './biometric-consent/service.js';
import type { SpokenConsentSettings } from './config.js';
import type { Database } from './db/client.js';
import { DetectionService } from './detection/service.js';
import { edgeAuditLookup } from './edge-link/audit-lookup.js';
import { HealthService } from './health/service.js';
import { RateLimiter } from './http/rate-limit.js';
import { closePendingRequests, LicenseRequestService } from './license-requests/service.js';
import type { WakeSignal } from './loops/wake-signal.js';
import { PlatformService } from './platforms/service.js';
import { SigningCertificateService } from './provenance/certificates.js';
import { ProvenanceService } from './provenance/service.js';
import { SoftBindingService } from './provenance/soft-binding.js';
import { LicenseService } from './registry/licenses/service.js';
import { SynthesisConsentService } from './registry/synthesis-consent/service.js';
import type { Runtime } from './runtime.js';
import { ScreeningService } from './screening/service.js';
import { SpokenConsentService } from './spoken-consent/service.js';
import type { VoiceprintEngine } from './voiceprint/index.js';
import { VoiceDisputeService } from './voices/disputes.js';
import { VoiceReviewService } from './voices/reviews.js';
import { VoiceService } from './voices/service.js';
import { WebhookService, type WebhookSettings } from './webhooks/service.js';

export interface ProtectionSettings {
  screeningPerMinute: number;
  comparePerMinute: number;
  licenseRequestsPerMinute: number;
  licensingUrl: string;
}

export interface ServiceDeps {
  db: Database;
  tokens: AccessTokens;
  hasher: PasswordHasher;
  runtime: Runtime;
  outbox: WakeSignal;
  /** Absent where no audio is served (tests of other domains): enroll, compare and screening answer 503. */
  voiceprint?: VoiceprintEngine;
  checkpoints: CheckpointSigner;
  /** The transparency log's origin line; default DEFAULT_TLOG_ORIGIN. */
  tlogOrigin?: string;
  webhooks: WebhookSettings;
  protection: ProtectionSettings;
  spokenConsent: SpokenConsentSettings;
  /** Account registrations per client address per minute. */
  registrationsPerMinute: number;
  /** The edge whose audit store a receipt asked for too early is looked up in; absent without one. */
  edge?: { url: string; internalSecret: string } | null;
}

/** Every service of the origin, one instance each; routes and background jobs share them. */
export interface Services {
  health: HealthService;
  auth: AuthService;
  platforms: PlatformService;
  /** Biometric consent: the speaker's recorded agreement that an enrollment needs. */
  biometricConsents: BiometricConsentService;
  /** Spoken consent: the challenge an owner reads at enrollment, and its checks. */
  spokenConsent: SpokenConsentService;
  /** A voice's synthesis consent (granted, withdrawn), as the edge index publishes it. */
  synthesisConsents: SynthesisConsentService;
  licenses: LicenseService;
  licenseRequests: LicenseRequestService;
  voices: VoiceService;
  voiceReviews: VoiceReviewService;
  voiceDisputes: VoiceDisputeService;
  detection: DetectionService;
  screening: ScreeningService;
  audit: AuditService;
  tlog: TransparencyLog;
  /** Content Credentials: judging files, and the certificates platforms sign them with. */
  provenance: ProvenanceService;
  softBinding: SoftBindingService;
  signingCertificates: SigningCertificateService;
  webhooks: WebhookService;
}

/** The one place services are built. */
export function buildServices(deps: ServiceDeps): Services {
  const { db, runtime, outbox, protection } = deps;
  const engine = deps.voiceprint;
  const limiter = new RateLimiter(db, runtime.clock);
  const licenses = new LicenseService({ db, runtime, outbox });
  const spokenConsent = new SpokenConsentService({ db, runtime, limiter, settings: deps.spokenConsent });
  const tlog = new TransparencyLog({
    db,
    clock: runtime.clock,
    checkpoints: deps.checkpoints,
    origin: deps.tlogOrigin ?? DEFAULT_TLOG_ORIGIN,
    ...(deps.edge && { edgeAudit: edgeAuditLookup(deps.edge, runtime.clock) }),
  });
  return {
    health: new HealthService({ db, voiceprint: engine }),
    auth: new AuthService({
      db,
      hasher: deps.hasher,
      tokens: deps.tokens,
      runtime,
      limiter,
      registrationsPerMinute: deps.registrationsPerMinute,
    }),
    platforms: new PlatformService({ db, runtime, outbox }),
    biometricConsents: new BiometricConsentService({ db, runtime }),
    spokenConsent,
    synthesisConsents: new SynthesisConsentService({
      db,
      runtime,
      outbox,
      onWithdrawn: (tx, voice, actor, now) => closePendingRequests(tx, voice, 'consent_withdrawn', actor, runtime, now),
    }),
    licenses,
    licenseRequests: new LicenseRequestService({
      db,
      runtime,
      outbox,
      licenses,
      limiter,
      licenseRequestsPerMinute: protection.licenseRequestsPerMinute,
      secretEncryption: deps.webhooks.sender.secretEncryption,
    }),
    voices: new VoiceService({ db, runtime, outbox, engine, spokenConsent }),
    voiceReviews: new VoiceReviewService({ db, runtime, outbox, spokenConsent }),
    voiceDisputes: new VoiceDisputeService({ db, runtime, outbox, engine, spokenConsent }),
    detection: new DetectionService({
      db,
      runtime,
      engine,
      limiter,
      comparePerMinute: protection.comparePerMinute,
      reportDetections: deps.webhooks.gateVariant === 'B',
    }),
    screening: new ScreeningService({ db, runtime, limiter, engine, ...protection }),
    audit: new AuditService({ db, clock: runtime.clock, checkpoints: deps.checkpoints }),
    tlog,
    provenance: new ProvenanceService({ db, runtime, limiter, tlog, engine }),
    softBinding: new SoftBindingService({ db, runtime, limiter, tlog, engine }),
    signingCertificates: new SigningCertificateService({ db, runtime }),
    webhooks: new WebhookService({ db, runtime, settings: deps.webhooks }),
  };
}
