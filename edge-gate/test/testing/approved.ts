import { expect } from 'vitest';

const JWT = /^[\w-]+\.[\w-]+\.[\w-]+$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export interface ApprovedAnswer {
  /** The gate's schema: A answers `authorization_token`, B `approval_token`. */
  variant: 'A' | 'B';
  voiceId: string;
  /** Variant A also answers the deprecated `approval_token` while its alias is served. */
  alias?: boolean;
  /** The check's id when the test knows it; any UUID otherwise. */
  checkId?: string;
}

/**
 * Asserts the whole body of an approved gate answer (docs/CONTRACT.md#gate-results), every field and
 * nothing else: the one place the edge's tests spell the approved answer, so a new field is added
 * here. Returns the authorization token.
 */
export function expectApproved(body: unknown, answer: ApprovedAnswer): string {
  const fields = body as Record<string, unknown>;
  const token = (answer.variant === 'A' ? fields.authorization_token : fields.approval_token) as string;
  expect(token).toMatch(JWT);
  expect(fields).toEqual({
    status: 'approved',
    ...(answer.variant === 'A' ? { authorization_token: token } : {}),
    ...(answer.variant === 'B' || answer.alias ? { approval_token: token } : {}),
    voice_id: answer.voiceId,
    consented: true,
    licensed: true,
    expires_at: expect.stringMatching(ISO_TIMESTAMP),
    check_id: answer.checkId ?? expect.stringMatching(UUID),
  });
  return token;
}
