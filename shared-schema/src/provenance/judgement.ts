import type { AuditEntry } from '../audit.js';
import { type VerifiedReceipt, verifyReceipt } from '../client/receipt.js';
import {
  ALTERED_AUDIO_CODES,
  type AuthorizationAssertion,
  type CredentialState,
  PROVENANCE_CHECKS,
  type ProvenanceCheck,
  type ProvenanceVerdict,
  type ProvenanceVerification,
} from '../provenance.js';
import type { FileCredentials } from './credentials.js';

/**
 * The part of judging a file that needs no service: what its credentials alone settle, and whether
 * the receipt it carries proves the decision it names. The origin's `POST /api/v1/provenance/verify`
 * and the client's offline `verifyFile` both judge through here (docs/CONTRACT.md#content-credentials).
 */

/** The verdicts the credentials settle before the receipt is read, in the contract's order. */
export type CredentialsVerdict = Extract<
  ProvenanceVerdict,
  'no_credentials' | 'altered' | 'credentials_invalid' | 'no_authorization' | 'authorization_malformed'
>;

/**
 * What the credentials alone settle: a verdict, or, for an intact manifest with one well-formed
 * authorization assertion, the assertion to check further. A broken manifest is judged before a
 * missing or malformed assertion: its contents cannot be relied on.
 */
export function settleCredentials(
  credentials: FileCredentials | null,
): { verdict: CredentialsVerdict } | { verdict: null; assertion: AuthorizationAssertion; state: Exclude<CredentialState, 'invalid'> } {
  if (!credentials) return { verdict: 'no_credentials' };
  if (credentials.state === 'invalid') {
    const altered = credentials.failure_codes.some((code) => (ALTERED_AUDIO_CODES as readonly string[]).includes(code));
    return { verdict: altered ? 'altered' : 'credentials_invalid' };
  }
  if (!credentials.authorization.present) return { verdict: 'no_authorization' };
  if (!credentials.authorization.valid) return { verdict: 'authorization_malformed' };
  return { verdict: null, assertion: credentials.authorization.assertion, state: credentials.state };
}

/** The `credentials` part of an answer; `registered_platform` is set once the signer is bound to the platform. */
export function credentialsReport(credentials: FileCredentials | null): ProvenanceVerification['credentials'] {
  return {
    present: credentials !== null,
    state: credentials?.state ?? null,
    failure_codes: credentials?.failure_codes ?? [],
    signer: credentials
      ? {
          common_name: credentials.signer.common_name,
          issuer: credentials.signer.issuer,
          serial_number: credentials.signer.serial_number,
          registered_platform: null,
        }
      : null,
    synthetic: credentials?.synthetic ?? false,
  };
}

/** The `authorization` part of an answer before anything is checked: the assertion's fields when it is well formed, every finding null. */
export function authorizationReport(credentials: FileCredentials | null): ProvenanceVerification['authorization'] {
  const authorization = credentials?.authorization;
  const assertion = authorization?.present && authorization.valid ? authorization.assertion : null;
  return {
    present: authorization?.present ?? false,
    problems: authorization?.present && !authorization.valid ? authorization.problems : [],
    check_id: assertion?.check_id ?? null,
    voice_id: assertion?.voice_id ?? null,
    platform_name: assertion?.platform_name ?? null,
    intended_use: assertion?.intended_use ?? null,
    decided_at: assertion?.decided_at ?? null,
    license_terms_sha256: assertion?.license_terms_sha256 ?? null,
    receipt_verified: null,
    approved: null,
    redeemed: null,
    consent_standing: null,
    license_standing: null,
    receipt: assertion?.receipt ?? null,
  };
}

/** An answer's `not_checked` before anything is checked: every check. A check that runs takes itself out (`checked`). */
export const noneChecked = (): ProvenanceCheck[] => [...PROVENANCE_CHECKS];

/** Records that these checks ran: their members now say what was found, and `not_checked` no longer names them. */
export function checked(answer: { not_checked: ProvenanceCheck[] }, ...checks: ProvenanceCheck[]): void {
  answer.not_checked = answer.not_checked.filter((check) => !checks.includes(check));
}

export type ReceiptCheck =
  | { verified: VerifiedReceipt & { entry: Omit<AuditEntry, 'entry_hash'> }; problems: [] }
  | { verified: null; problems: [string] };

/**
 * Whether the assertion's receipt proves the decision it names: it verifies against the log's
 * verifier key (signature, origin, inclusion, leaf at its index), it is of the log the assertion
 * names, and the logged entry is the assertion's check with the same voice, platform, use, time and
 * licence terms (both without terms, or the same hash).
 * Whether the receipt's checkpoint is consistent with the log is the caller's to tell: the service
 * proves it from its tiles, an offline verifier compares it with a checkpoint it saved.
 */
export async function checkAssertionReceipt(
  assertion: AuthorizationAssertion,
  verifierKey: string,
  options: { origin?: string } = {},
): Promise<ReceiptCheck> {
  const refused = (problem: string): ReceiptCheck => ({ verified: null, problems: [problem] });
  if (assertion.receipt.check_id.toLowerCase() !== assertion.check_id) return refused('the receipt is for another check');
  let verified: VerifiedReceipt;
  try {
    verified = await verifyReceipt(assertion.receipt, verifierKey, options);
  } catch (error) {
    return refused(`the receipt does not verify against this log: ${(error as Error).message}`);
  }
  if (verified.checkpoint.origin !== assertion.log_origin) return refused('the assertion names another log');
  const { entry } = verified;
  const named = [
    ['voice_id', assertion.voice_id],
    ['platform_name', assertion.platform_name],
    ['intended_use', assertion.intended_use],
    ['decided_at', assertion.decided_at],
    ['license_terms_sha256', assertion.license_terms_sha256],
  ] as const;
  const differing = named.filter(([field, value]) => entry[field] !== value).map(([field]) => field);
  if (differing.length > 0) return refused(`the logged decision differs from the assertion in ${differing.join(', ')}`);
  return { verified, problems: [] };
}

/** The logged entry is a gate decision that approved. */
export const isApproval = (entry: Pick<AuditEntry, 'kind' | 'decision'>) => entry.kind === 'gate.decision' && entry.decision === 'allow';
