import { type FieldError, limits, ProblemError } from '@vip/shared-schema';
import type { FastifyRequest } from 'fastify';

/** What a form may hold: file fields with how many files each, and text fields. Anything else is refused. */
export interface FormSpec {
  files: Record<string, { maxCount: number }>;
  fields: readonly string[];
}

/** One uploaded file: its bytes and the name it was uploaded under, which answers about it use. */
export interface UploadedFile {
  filename: string;
  bytes: Uint8Array;
}

export interface MultipartForm {
  files: Map<string, UploadedFile[]>;
  fields: Map<string, string>;
}

/** Longest upload name kept; a longer one is cut (it is only ever shown back to the uploader). */
const MAX_FILENAME_LENGTH = 255;

/**
 * The name a file was uploaded under, as answers show it: the last path segment, without control
 * characters, at most 255 characters; `audio 2` (field and position) when the client sent none.
 */
export function uploadName(filename: string | undefined, field: string, position: number): string {
  const printable = [...(filename ?? '')].filter((ch) => ch.charCodeAt(0) >= 0x20 && ch !== '\u007f').join('');
  const clean = (printable.split(/[\\/]/).at(-1) ?? '').trim().slice(0, MAX_FILENAME_LENGTH);
  return clean || `${field} ${position}`;
}

/** Text fields are ids and names; a longer value is a mistake, not a name. */
const MAX_FIELD_BYTES = 1024;

/**
 * Reads a multipart/form-data body into memory, holding each file to the audio size limit as it
 * streams in (the JSON body limit does not apply to multipart), and refusing unknown fields, a
 * file where text belongs and text where a file belongs.
 */
export async function readMultipartForm(request: FastifyRequest, spec: FormSpec): Promise<MultipartForm> {
  if (!request.isMultipart()) {
    throw new ProblemError('unsupported_media_type', 'Send the request as multipart/form-data.');
  }
  const maxFiles = Object.values(spec.files).reduce((sum, field) => sum + field.maxCount, 0);
  const form: MultipartForm = { files: new Map(), fields: new Map() };
  try {
    // One more than allowed, so the first surplus part reaches the checks below and is named in the answer.
    const parts = request.parts({
      limits: { fileSize: limits.audioMaxBytes, files: maxFiles + 1, fields: spec.fields.length + 1, fieldSize: MAX_FIELD_BYTES },
    });
    for await (const part of parts) {
      const fieldError = (message: string) => invalid([{ field: `body.${part.fieldname}`, message }]);
      if (part.type === 'file') {
        const fileSpec = spec.files[part.fieldname];
        if (!fileSpec) throw fieldError(spec.fields.includes(part.fieldname) ? 'must be text, not a file' : 'unknown field');
        const files = form.files.get(part.fieldname) ?? [];
        if (files.length >= fileSpec.maxCount) throw fieldError(`at most ${fileSpec.maxCount} file(s)`);
        files.push({ filename: uploadName(part.filename, part.fieldname, files.length + 1), bytes: new Uint8Array(await part.toBuffer()) });
        form.files.set(part.fieldname, files);
      } else {
        if (spec.files[part.fieldname]) throw fieldError('must be a file upload, not text');
        if (!spec.fields.includes(part.fieldname)) throw fieldError('unknown field');
        if (form.fields.has(part.fieldname)) throw fieldError('given more than once');
        if (part.valueTruncated) throw fieldError(`longer than ${MAX_FIELD_BYTES} bytes`);
        // Postgres text cannot hold U+0000 (see http/routes.ts).
        if (String(part.value).includes('\u0000')) throw fieldError('must not contain NUL characters');
        form.fields.set(part.fieldname, String(part.value));
      }
    }
  } catch (error) {
    throw asFormProblem(error, maxFiles, spec.fields.length);
  }
  return form;
}

const invalid = (errors: FieldError[]) => new ProblemError('validation_failed', 'The multipart form is invalid.', { errors });

/** @fastify/multipart and busboy say what went wrong by code or by message only; each becomes a problem. */
function asFormProblem(error: unknown, maxFiles: number, maxFields: number): ProblemError {
  if (error instanceof ProblemError) return error;
  switch ((error as { code?: string }).code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return new ProblemError('payload_too_large', `Each file may be at most ${limits.audioMaxBytes} bytes.`);
    case 'FST_FILES_LIMIT':
      return invalid([{ field: 'body', message: `at most ${maxFiles} file(s)` }]);
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return invalid([{ field: 'body', message: `at most ${maxFields} text field(s)` }]);
    case 'FST_PROTO_VIOLATION':
      return invalid([{ field: 'body', message: 'field name not allowed' }]);
    default:
      return new ProblemError('validation_failed', 'The multipart body could not be read.');
  }
}
