import { PROBLEM_CONTENT_TYPE } from '@vip/shared-schema';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

/** Asserts an RFC 9457 problem answer with this status and code, and returns its body. */
export function expectProblem(response: LightMyRequestResponse, status: number, code: string) {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toContain(PROBLEM_CONTENT_TYPE);
  expect(response.json().code).toBe(code);
  return response.json() as { detail: string; errors?: { field: string; message: string }[]; heard?: string };
}
