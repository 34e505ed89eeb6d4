import { BODY_PROBLEM_DETAILS, limits, ProblemError, validationProblem } from '@vip/shared-schema';
import { createMiddleware } from 'hono/factory';
import type { z } from 'zod';
import type { AppContext, AppEnv } from './context.js';

/**
 * Refuses bodies over a limit before they are kept in full. Like hono's bodyLimit, except that a
 * chunked body that overflows is read on (and dropped, up to DRAIN_MAX_BYTES) before the 413 goes
 * out: answered while the client was still sending, the caller got a 503 from the runtime instead
 * of the problem (test/security/resource-exhaustion.test.ts).
 */
const DRAIN_MAX_BYTES = 8 * 1024 * 1024;

const limitBodyTo = (maxBytes: number) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const tooLarge = () => new ProblemError('payload_too_large', `The body exceeds ${maxBytes} bytes.`);
    const body = c.req.raw.body;
    if (!body) return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && !c.req.header('transfer-encoding')) {
      if (Number.parseInt(declared, 10) > maxBytes) throw tooLarge();
      return next();
    }
    const reader = body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        // Read (and drop) what the client still sends, up to a bound, so the answer reaches it.
        for (let drained = 0; drained < DRAIN_MAX_BYTES; ) {
          const rest = await reader.read();
          if (rest.done) break;
          drained += rest.value.byteLength;
        }
        await reader.cancel();
        throw tooLarge();
      }
      chunks.push(value);
    }
    const whole = new Uint8Array(size);
    let offset = 0;
    for (const chunk of chunks) {
      whole.set(chunk, offset);
      offset += chunk.byteLength;
    }
    c.req.raw = new Request(c.req.raw, { body: whole });
    return next();
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
    throw new ProblemError('malformed_json', BODY_PROBLEM_DETAILS.malformedJson);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw validationProblem(parsed.error.issues, 'body');
  return parsed.data;
}

export async function jsonBody<S extends z.ZodType>(c: AppContext, schema: S): Promise<z.output<S>> {
  requireJsonMediaType(c);
  return parseJsonText(c, await c.req.text(), schema);
}
