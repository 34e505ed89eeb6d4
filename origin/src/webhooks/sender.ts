import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { webhookHeaders } from '@vip/shared-schema';
import { checkWebhookUrl, type Resolver } from './address-guard.js';
import { openSealedBody } from './sealed-fields.js';
import { SecretDecryptionError, type SecretEncryption } from './secret-encryption.js';

export interface DeliveryAttempt {
  webhookId: string;
  url: string;
  messageId: string;
  body: string;
  /** As stored (encrypted, bound to `webhookId`). Current secret first; during a rotation's grace period the previous one too. */
  storedSecrets: readonly string[];
  timestampSeconds: number;
}

export type AttemptOutcome =
  | { kind: 'response'; statusCode: number; retryAfter: string | undefined }
  | { kind: 'refused'; reason: string }
  /** Not sent: a secret could not be decrypted, and a delivery never goes out unsigned. */
  | { kind: 'unsigned'; reason: string }
  | { kind: 'error'; reason: string };

export interface SenderSettings {
  resolve: Resolver;
  allowLoopback: boolean;
  timeoutMs: number;
  /** Decrypts the stored secrets to sign with; also encrypts them when they are stored. */
  secretEncryption: SecretEncryption;
}

/**
 * One signed POST. The secrets are decrypted here only, to sign, and a sealed field of the body opened. The host is resolved and checked
 * again now (DNS may have changed since registration) and the connection goes to exactly the checked
 * address. Redirects are not followed: a 3xx is just a failed attempt. The response body is never
 * read beyond draining it.
 */
export async function sendWebhook(attempt: DeliveryAttempt, settings: SenderSettings): Promise<AttemptOutcome> {
  let secrets: string[];
  let body: string;
  try {
    secrets = attempt.storedSecrets.map((stored) => settings.secretEncryption.decrypt(stored, attempt.webhookId));
    body = openSealedBody(settings.secretEncryption, attempt.body);
  } catch (error) {
    if (error instanceof SecretDecryptionError) return { kind: 'unsigned', reason: error.message };
    throw error;
  }
  const verdict = await checkWebhookUrl(attempt.url, settings.resolve, settings.allowLoopback);
  if (!verdict.ok) return { kind: 'refused', reason: verdict.reason };
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'vip-webhooks/1',
    ...(await webhookHeaders(secrets, attempt.messageId, attempt.timestampSeconds, body)),
  };
  const pinned: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all) callback(null, [{ address: verdict.address, family: verdict.family }]);
    else callback(null, verdict.address, verdict.family);
  };
  const send = verdict.url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve) => {
    const req = send(verdict.url, { method: 'POST', headers, lookup: pinned, timeout: settings.timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve({ kind: 'response', statusCode: res.statusCode ?? 0, retryAfter: header(res.headers['retry-after']) }));
      res.on('error', (error) => resolve({ kind: 'error', reason: error.message }));
    });
    // `timeout` only reports idleness; the attempt as a whole is bounded too.
    const deadline = setTimeout(() => req.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)), settings.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`no answer within ${settings.timeoutMs} ms`)));
    req.on('error', (error) => resolve({ kind: 'error', reason: error.message }));
    req.on('close', () => clearTimeout(deadline));
    req.end(body);
  });
}

const header = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

/** What an attempt is recorded and reported as: its HTTP status if any, and an error (null for a 2xx). */
export function attemptSummary(outcome: AttemptOutcome): { statusCode: number | null; error: string | null } {
  switch (outcome.kind) {
    case 'response':
      return {
        statusCode: outcome.statusCode,
        error: outcome.statusCode >= 200 && outcome.statusCode < 300 ? null : `HTTP ${outcome.statusCode}`,
      };
    case 'refused':
      return { statusCode: null, error: `refused: ${outcome.reason}` };
    case 'unsigned':
      return { statusCode: null, error: `not sent: ${outcome.reason}` };
    case 'error':
      return { statusCode: null, error: outcome.reason };
  }
}
