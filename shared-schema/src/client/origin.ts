import type { z } from 'zod';
import * as audit from '../routes/origin/audit.js';
import * as auth from '../routes/origin/auth.js';
import * as biometricConsent from '../routes/origin/biometric-consent.js';
import * as detection from '../routes/origin/detection.js';
import * as licenseRequests from '../routes/origin/license-requests.js';
import * as platforms from '../routes/origin/platforms.js';
import * as provenance from '../routes/origin/provenance.js';
import * as licenses from '../routes/origin/registry/licenses.js';
import * as synthesisConsent from '../routes/origin/registry/synthesis-consent.js';
import * as screening from '../routes/origin/screening.js';
import * as spokenConsent from '../routes/origin/spoken-consent.js';
import * as voices from '../routes/origin/voices.js';
import * as webhooks from '../routes/origin/webhooks.js';
import type { enrollFieldsSchema } from '../voices.js';
import { ProblemError } from './errors.js';
import {
  type BodyOf,
  type CallOptions,
  type ClientOptions,
  callRoute,
  createTransport,
  type JsonRoute,
  type QueryOf,
  type ResultOf,
} from './http.js';

/**
 * The owner and admin side of the service (the origin). Bearer access tokens come from `login`;
 * a platform's API key reads its own audit entries. Every request and result type is read off the
 * route contracts in shared-schema/src/routes/origin/, whose files, like this client's namespaces,
 * are the origin's domain folders (docs/ARCHITECTURE.md#how-to-add-an-origin-route).
 */
export type OriginClientOptions = ClientOptions;

/** One recording: a Blob/File, or bytes with a file name (the origin detects the format from the content). */
export type AudioInput = Blob | { data: Blob | ArrayBuffer | Uint8Array; filename: string; type?: string };

/** A recording of the consent statement and the phrase of a challenge (`spokenConsent.challenge`), read in the voice enrolled. */
export type SpokenConsentInput = { challenge_id: string; recording: AudioInput };
export type EnrollInput = z.input<typeof enrollFieldsSchema> & { audio: readonly AudioInput[]; spoken_consent?: SpokenConsentInput };
/** A dispute is the enrollment form with its spoken consent always sent. */
export type DisputeInput = EnrollInput & { spoken_consent: SpokenConsentInput };
/** One recording, or several of the same speaker screened together as one sample. */
export type ScreenInput = { audio: AudioInput | readonly AudioInput[]; platform_name: string };
export type CompareInput = { audio1: AudioInput } & ({ audio2: AudioInput; voice_id?: never } | { voice_id: string; audio2?: never });

/** Spelled this way because the DOM and Node typings name the part type differently. */
type BlobPartOf = NonNullable<ConstructorParameters<typeof Blob>[0]>[number];

function appendAudio(form: FormData, field: string, audio: AudioInput, index: number): void {
  if (audio instanceof Blob) {
    form.append(field, audio, 'name' in audio && typeof audio.name === 'string' ? audio.name : `${field}-${index}`);
    return;
  }
  const blob =
    audio.data instanceof Blob ? audio.data : new Blob([audio.data as BlobPartOf], { type: audio.type ?? 'application/octet-stream' });
  form.append(field, blob, audio.filename);
}

/** Adds the recordings of an enrollment or re-enrollment to `form`, then its spoken consent when there is one. */
/** The fields and files of an enrollment, and of a dispute, which names the voice it would become. */
function enrollmentForm(input: EnrollInput): FormData {
  const form = new FormData();
  form.set('name', input.name);
  form.set('consent_id', input.consent_id);
  return appendRecordings(form, input.audio, input.spoken_consent);
}

function appendRecordings(form: FormData, audio: readonly AudioInput[], spokenConsent: SpokenConsentInput | undefined): FormData {
  for (const [index, recording] of audio.entries()) appendAudio(form, 'audio', recording, index);
  if (spokenConsent) {
    form.set('challenge_id', spokenConsent.challenge_id);
    appendAudio(form, 'spoken_consent', spokenConsent.recording, 0);
  }
  return form;
}

export interface ReceiptOptions extends CallOptions {
  /**
   * How long to wait in all, in milliseconds, while the receipt is `receipt_pending` (the check is
   * decided but not yet collected, chained or covered by a signed checkpoint): it asks again after
   * each `Retry-After`. Default 0: a pending receipt throws at once. It never waits past this bound,
   * and never on another problem (a `not_found` check is not anyone's to wait for).
   */
  waitMs?: number;
  /** Called before each wait with the seconds it will wait (a page says "waiting for the log"). */
  onPending?: (retryAfterSeconds: number) => void;
}

/** Asks for a receipt until it is there, while it is pending and within `waitMs`. */
async function waitingForReceipt<T>(
  ask: () => Promise<T>,
  { waitMs = 0, onPending, signal }: Pick<ReceiptOptions, 'waitMs' | 'onPending' | 'signal'>,
): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (!(error instanceof ProblemError && error.code === 'receipt_pending')) throw error;
      const seconds = error.retryAfter ?? 1;
      if (Date.now() + seconds * 1000 > deadline) throw error;
      onPending?.(seconds);
      await new Promise<void>((resolve, reject) => {
        const aborted = () => {
          clearTimeout(timer);
          reject(signal?.reason);
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener('abort', aborted);
          resolve();
        }, seconds * 1000);
        signal?.addEventListener('abort', aborted, { once: true });
      });
    }
  }
}

export function createOriginClient(options: OriginClientOptions) {
  const transport = createTransport(options);
  const call = <C extends JsonRoute>(
    contract: C,
    input: { params?: Record<string, string>; query?: Record<string, unknown>; body?: unknown },
    callOptions?: CallOptions,
  ): Promise<ResultOf<C>> => callRoute(transport, contract, input, callOptions);
  const json = <C extends JsonRoute>(contract: C, body: BodyOf<C>, params?: Record<string, string>, callOptions?: CallOptions) =>
    call(contract, { body, params }, callOptions);

  const biometricConsentMethods = {
    /** The owner's consent to enroll a voice print; an enrollment uses one up, and one serves one voice. */
    grant: (body: BodyOf<typeof biometricConsent.grantBiometricConsentRoute>, o?: CallOptions) =>
      json(biometricConsent.grantBiometricConsentRoute, body, undefined, o),
  };
  const synthesisConsentMethods = {
    /** The owner's synthesis consent: `active` lets the gate approve (with a licence), `withdrawn` stops approvals. */
    set: (voiceId: string, status: BodyOf<typeof synthesisConsent.setSynthesisConsentRoute>['status'], o?: CallOptions) =>
      json(synthesisConsent.setSynthesisConsentRoute, { status }, { voice_id: voiceId }, o),
  };
  const voiceMethods = {
    enroll: (input: EnrollInput, o?: CallOptions) => call(voices.enrollVoiceRoute, { body: enrollmentForm(input) }, o),
    /** Claim a voice another account enrolled, as the person it belongs to (docs/OWNER-GUIDE.md#if-your-voice-is-enrolled-by-someone-else). */
    dispute: (input: DisputeInput, o?: CallOptions) => call(voices.openVoiceDisputeRoute, { body: enrollmentForm(input) }, o),
    /** The caller's disputes, newest first, with where each stands. */
    listDisputes: (query: QueryOf<typeof voices.listVoiceDisputesRoute> = {}, o?: CallOptions) =>
      call(voices.listVoiceDisputesRoute, { query }, o),
    /** Speech seconds and quality of recordings as enrollment would measure them; nothing is stored. */
    measure: (audio: EnrollInput['audio'], o?: CallOptions) => {
      const form = new FormData();
      for (const [index, recording] of audio.entries()) appendAudio(form, 'audio', recording, index);
      return call(voices.measureRecordingsRoute, { body: form }, o);
    },
    /** A new voiceprint under the model the service runs now; the voice keeps its consents and licences. */
    reenroll: (voiceId: string, audio: EnrollInput['audio'], spokenConsent?: SpokenConsentInput, o?: CallOptions) =>
      call(voices.reenrollVoiceRoute, { params: { voice_id: voiceId }, body: appendRecordings(new FormData(), audio, spokenConsent) }, o),
    list: (query: QueryOf<typeof voices.listVoicesRoute> = {}, o?: CallOptions) => call(voices.listVoicesRoute, { query }, o),
    delete: (voiceId: string, o?: CallOptions) => call(voices.deleteVoiceRoute, { params: { voice_id: voiceId } }, o),
    /** Admin only: the voices held for review. */
    listReviews: (query: QueryOf<typeof voices.listVoiceReviewsRoute> = {}, o?: CallOptions) =>
      call(voices.listVoiceReviewsRoute, { query }, o),
    /** Admin only: clear or reject a held voice, or transfer a disputed one to its claimant. */
    decideReview: (voiceId: string, decision: BodyOf<typeof voices.decideVoiceReviewRoute>['decision'], o?: CallOptions) =>
      json(voices.decideVoiceReviewRoute, { decision }, { voice_id: voiceId }, o),
  };
  const screeningMethods = {
    /** Which protected voices a recording is: up to 5 matches above the calibrated point, best first; `[]` when none. */
    screen: (input: ScreenInput, o?: CallOptions) => {
      const form = new FormData();
      const recordings = Array.isArray(input.audio) ? input.audio : [input.audio as AudioInput];
      for (const [index, recording] of recordings.entries()) appendAudio(form, 'audio', recording, index + 1);
      form.set('platform_name', input.platform_name);
      return call(screening.screenSampleRoute, { body: form }, o);
    },
  };
  const licenseRequestMethods = {
    /** A platform asks a voice's owner for a licence; the answer comes as `license.granted` or `license.request_declined`. */
    request: (voiceId: string, body: BodyOf<typeof licenseRequests.requestLicenseRoute>, o?: CallOptions) =>
      json(licenseRequests.requestLicenseRoute, body, { voice_id: voiceId }, o),
    /** One of the platform's own requests. */
    get: (requestId: string, o?: CallOptions) => call(licenseRequests.getLicenseRequestRoute, { params: { request_id: requestId } }, o),
    /** The owner's side: the platforms' requests for licences of one of their voices. */
    list: (voiceId: string, query: QueryOf<typeof licenseRequests.listLicenseRequestsRoute> = {}, o?: CallOptions) =>
      call(licenseRequests.listLicenseRequestsRoute, { params: { voice_id: voiceId }, query }, o),
    /** Creates the licence (the request's terms unless others are given); its token goes to the platform only. */
    approve: (voiceId: string, requestId: string, body: BodyOf<typeof licenseRequests.approveLicenseRequestRoute> = {}, o?: CallOptions) =>
      json(licenseRequests.approveLicenseRequestRoute, body, { voice_id: voiceId, request_id: requestId }, o),
    decline: (voiceId: string, requestId: string, body: BodyOf<typeof licenseRequests.declineLicenseRequestRoute> = {}, o?: CallOptions) =>
      json(licenseRequests.declineLicenseRequestRoute, body, { voice_id: voiceId, request_id: requestId }, o),
  };

  // One namespace per origin domain folder (origin/src/<domain>/), named as the folder is.
  return {
    auth: {
      register: (body: BodyOf<typeof auth.registerRoute>, o?: CallOptions) => json(auth.registerRoute, body, undefined, o),
      login: (body: BodyOf<typeof auth.loginRoute>, o?: CallOptions) => json(auth.loginRoute, body, undefined, o),
      refresh: (refreshToken: string, o?: CallOptions) => json(auth.refreshRoute, { refresh_token: refreshToken }, undefined, o),
      /** Revokes the session of this refresh token. */
      logout: (refreshToken: string, o?: CallOptions) => json(auth.logoutRoute, { refresh_token: refreshToken }, undefined, o),
      /** Needs a Bearer token; ends every session of the account and returns a new one. */
      changePassword: (body: BodyOf<typeof auth.changePasswordRoute>, o?: CallOptions) =>
        json(auth.changePasswordRoute, body, undefined, o),
    },
    platforms: {
      create: (body: BodyOf<typeof platforms.createPlatformRoute>, o?: CallOptions) =>
        json(platforms.createPlatformRoute, body, undefined, o),
      list: (o?: CallOptions) => call(platforms.listPlatformsRoute, {}, o),
      createApiKey: (platformId: string, o?: CallOptions) => json(platforms.createApiKeyRoute, {}, { platform_id: platformId }, o),
      listApiKeys: (platformId: string, o?: CallOptions) => call(platforms.listApiKeysRoute, { params: { platform_id: platformId } }, o),
      revokeApiKey: (platformId: string, keyId: string, o?: CallOptions) =>
        call(platforms.revokeApiKeyRoute, { params: { platform_id: platformId, key_id: keyId } }, o),
    },
    biometricConsent: biometricConsentMethods,
    spokenConsent: {
      /** The statement and a fresh random phrase to read into the `spoken_consent` of the next enrollment or re-enrollment. */
      challenge: (o?: CallOptions) => call(spokenConsent.createSpokenConsentChallengeRoute, {}, o),
    },
    voices: {
      ...voiceMethods,
      /** @deprecated Use `synthesisConsent.set` (the same call). */
      setConsent: synthesisConsentMethods.set,
    },
    synthesisConsent: synthesisConsentMethods,
    licenses: {
      /** Whether a platform is registered under exactly this name (404 `not_found` when none is). */
      checkPlatformName: (platformName: string, o?: CallOptions) =>
        call(licenses.checkPlatformNameRoute, { params: { platform_name: platformName } }, o),
      create: (voiceId: string, body: BodyOf<typeof licenses.createLicenseRoute>, o?: CallOptions) =>
        json(licenses.createLicenseRoute, body, { voice_id: voiceId }, o),
      list: (voiceId: string, o?: CallOptions) => call(licenses.listLicensesRoute, { params: { voice_id: voiceId } }, o),
      renew: (voiceId: string, licenseId: string, body: BodyOf<typeof licenses.renewLicenseRoute>, o?: CallOptions) =>
        json(licenses.renewLicenseRoute, body, { voice_id: voiceId, license_id: licenseId }, o),
      revoke: (voiceId: string, licenseId: string, o?: CallOptions) =>
        call(licenses.revokeLicenseRoute, { params: { voice_id: voiceId, license_id: licenseId } }, o),
    },
    licenseRequests: licenseRequestMethods,
    detection: {
      compare: (input: CompareInput, o?: CallOptions) => {
        const form = new FormData();
        appendAudio(form, 'audio1', input.audio1, 1);
        if (input.audio2 !== undefined) appendAudio(form, 'audio2', input.audio2, 2);
        if (input.voice_id !== undefined) form.set('voice_id', input.voice_id);
        return call(detection.compareVoicesRoute, { body: form }, o);
      },
    },
    screening: screeningMethods,
    provenance: {
      /**
       * One file's Content Credentials judged by the service: the signer, the authorization it carries and
       * the voice in it, as one verdict (`verifyFile` from `@vip/client/provenance` judges it without the service).
       */
      verify: (audio: AudioInput, o?: CallOptions) => {
        const form = new FormData();
        appendAudio(form, 'audio', audio, 0);
        return call(provenance.verifyProvenanceRoute, { body: form }, o);
      },
      /** The CA (or leaf) certificate a platform signs Content Credentials under: its own key, or an administrator naming it. */
      registerCertificate: (body: BodyOf<typeof provenance.registerSigningCertificateRoute>, o?: CallOptions) =>
        json(provenance.registerSigningCertificateRoute, body, undefined, o),
      listCertificates: (query: QueryOf<typeof provenance.listSigningCertificatesRoute> = {}, o?: CallOptions) =>
        call(provenance.listSigningCertificatesRoute, { query }, o),
      /** From now on no file signed under it verifies as the platform's. */
      revokeCertificate: (certificateId: string, o?: CallOptions) =>
        call(provenance.revokeSigningCertificateRoute, { params: { certificate_id: certificateId } }, o),
    },
    webhooks: {
      register: (body: BodyOf<typeof webhooks.registerWebhookRoute>, o?: CallOptions) =>
        json(webhooks.registerWebhookRoute, body, undefined, o),
      list: (o?: CallOptions) => call(webhooks.listWebhooksRoute, {}, o),
      delete: (webhookId: string, o?: CallOptions) => call(webhooks.deleteWebhookRoute, { params: { webhook_id: webhookId } }, o),
      /** Sends one signed `webhook.test` delivery now and reports the outcome. */
      test: (webhookId: string, o?: CallOptions) => call(webhooks.testWebhookRoute, { params: { webhook_id: webhookId } }, o),
      /** Resumes deliveries to an endpoint a 410 Gone disabled. */
      enable: (webhookId: string, o?: CallOptions) => call(webhooks.enableWebhookRoute, { params: { webhook_id: webhookId } }, o),
      rotateSecret: (webhookId: string, o?: CallOptions) =>
        call(webhooks.rotateWebhookSecretRoute, { params: { webhook_id: webhookId } }, o),
      /** The endpoint's most recent deliveries, newest first, with their outcomes (no bodies). */
      deliveries: (webhookId: string, query: QueryOf<typeof webhooks.listWebhookDeliveriesRoute> = {}, o?: CallOptions) =>
        call(webhooks.listWebhookDeliveriesRoute, { params: { webhook_id: webhookId }, query }, o),
    },
    audit: {
      /** Bearer owner: entries of their voices; admin: all; API key: its platform's checks. */
      list: (query: QueryOf<typeof audit.auditLogRoute> = {}, o?: CallOptions) => call(audit.auditLogRoute, { query }, o),
      /** Admin only. */
      verify: (query: QueryOf<typeof audit.auditVerifyRoute> = {}, o?: CallOptions) => call(audit.auditVerifyRoute, { query }, o),
      checkpoints: (query: QueryOf<typeof audit.auditCheckpointsRoute> = {}, o?: CallOptions) =>
        call(audit.auditCheckpointsRoute, { query }, o),
      latestCheckpoint: (o?: CallOptions) => call(audit.latestAuditCheckpointRoute, {}, o),
      checkpointKeys: (o?: CallOptions) => call(audit.auditCheckpointKeysRoute, {}, o),
      /**
       * The receipt of one entry (same visibility as the entry); check it with `verifyReceipt` and the
       * log's verifier key. Throws a ProblemError `receipt_pending` (with Retry-After) until a signed
       * checkpoint covers the entry, also right after the gate decided, or waits for it up to `waitMs`.
       */
      receipt: (checkId: string, { waitMs, onPending, ...callOptions }: ReceiptOptions = {}) =>
        waitingForReceipt(() => call(audit.auditReceiptRoute, { params: { check_id: checkId } }, callOptions), {
          waitMs,
          onPending,
          signal: callOptions.signal,
        }),
    },
    // The names from before the namespaces followed the origin's folders, documented in INTEGRATION.md and kept so
    // code written against them runs on; each is the same function as its new name.
    /** @deprecated Use `biometricConsent.grant`. */
    consents: { grantBiometric: biometricConsentMethods.grant },
    /** @deprecated Use `voices.listReviews` and `voices.decideReview`. */
    voiceReviews: { list: voiceMethods.listReviews, decide: voiceMethods.decideReview },
    /** @deprecated Use `screening.screen`, `licenseRequests.request` and `licenseRequests.get`. */
    protect: { screen: screeningMethods.screen, requestLicense: licenseRequestMethods.request, licenseRequest: licenseRequestMethods.get },
  };
}

export type OriginClient = ReturnType<typeof createOriginClient>;
