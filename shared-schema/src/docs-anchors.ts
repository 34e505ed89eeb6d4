/**
 * Names the OpenAPI documents (contract.ts) and the `/docs` page's script share. Kept apart from
 * contract.ts so the page's script carries no schema library.
 */

/** The document's extension holding the problem-code table (Markdown), which `/docs` draws after the operations. */
export const PROBLEM_CODES_EXTENSION = 'x-problem-codes';
/** The element id `/docs` gives the drawn table, which the document's contents link to. */
export const PROBLEM_CODES_ANCHOR = 'problem-codes';
