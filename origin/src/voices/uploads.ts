import { enrollFieldsSchema, ProblemError, qualityWarnings, validationProblem } from '@vip/shared-schema';
import type { MultipartForm, UploadedFile } from '../http/multipart-form.js';
import type { EmbedFileResult } from '../voiceprint/index.js';

/**
 * The name, biometric consent and recordings of an enrollment or dispute form. `challenge_id` belongs
 * to the spoken consent, which checks it (spoken-consent/service.ts).
 */
export function enrollmentFormOf(form: MultipartForm) {
  const { challenge_id: _challengeId, ...fields } = Object.fromEntries(form.fields);
  const parsed = enrollFieldsSchema.safeParse(fields);
  if (!parsed.success) throw validationProblem(parsed.error.issues, 'body');
  return { name: parsed.data.name, consentId: parsed.data.consent_id, files: audioFilesOf(form) };
}

/** The recordings of an enrollment, re-enrollment or dispute form: at least one. */
export function audioFilesOf(form: MultipartForm): UploadedFile[] {
  const files = form.files.get('audio') ?? [];
  if (files.length === 0) {
    throw new ProblemError('validation_failed', 'The multipart form is invalid.', {
      errors: [{ field: 'body.audio', message: 'at least one audio file is required' }],
    });
  }
  return files;
}

/** The quality report: each file's measurements under the name it was uploaded as, and the worst of them. */
export function summarizeQuality(results: readonly EmbedFileResult[], uploads: readonly UploadedFile[]) {
  const perFile = results.map((result, index) => ({ filename: uploads[index]!.filename, ...result.quality }));
  const clippingRatio = Math.max(...perFile.map((quality) => quality.clipping_ratio));
  const snrDb = Math.min(...perFile.map((quality) => quality.snr_db));
  return {
    files: perFile,
    clipping_ratio: clippingRatio,
    snr_db: snrDb,
    warnings: qualityWarnings({ clipping_ratio: clippingRatio, snr_db: snrDb }),
  };
}
