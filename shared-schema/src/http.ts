/** Request ids: a caller's well-formed `x-request-id` is kept so traces join up; anything else is replaced. */
export const REQUEST_ID_HEADER = 'x-request-id';
const WELL_FORMED_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;

export function requestIdFrom(header: string | null | undefined, generate: () => string): string {
  return header && WELL_FORMED_REQUEST_ID.test(header) ? header : generate();
}
