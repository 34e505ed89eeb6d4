import { limits, ProblemError, validationProblem } from '@vip/shared-schema';
import { bodyLimit } from 'hono/body-limit';
import type { z } from 'zod';
import type { AppContext } from './context.js';

/** Refuses bodies over a limit before they are read in full. */
const limitBodyTo = (maxBytes: number) =>
  bodyLimit({
    maxSize: maxBytes,
    onError: () => {
      throw new ProblemError('payload_too_large', `The body exceeds ${maxBytes} bytes.`);
    },
  });

export const jsonBodyLimit = limitBodyTo(limits.jsonBodyMaxBytes);
/** Sync batches carry up to 500 voice records, far more than a public request may. */
export const internalBodyLimit = limitBodyTo(limits.internalBodyMaxBytes);

const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json$/i;

function requireJsonMediaType(c: AppContext): void {
  const mediaType = (c.req.header('content-type') ?? '').split(';')[0]!.trim();
  if (!JSON_MEDIA_TYPE.test(mediaType)) {
    throw new ProblemError('unsupported_media_type', 'Send the body as application/json.', {
      headers: { 'accept-post': 'application/json' },
    });
  }
}

/** Parses a body already read as text: 415 unless JSON, 422 when malformed or off the schema. */
export function parseJsonText<S extends z.ZodType>(c: AppContext, text: string, schema: S): z.output<S> {
  requireJsonMediaType(c);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ProblemError('malformed_json', 'The body is not valid JSON.');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationProblem(parsed.error.issues, 'body');
  return parsed.data;
}

export async function jsonBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<z.output<S>> {
  requireJsonMediaType(c);
  return parseJsonText(c, await c.req.text(), schema);
}
