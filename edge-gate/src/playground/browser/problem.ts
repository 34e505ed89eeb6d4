import { h, prettyJson, replace } from '@vip/shared-schema/browser/dom';

/**
 * An RFC 9457 problem as the service answered it: its title and detail in words, the wait a refusal
 * names in its Retry-After header (a 429's), then the body.
 */
export function renderProblem(where: HTMLElement, status: number, body: unknown, headers: Headers): void {
  const problem = body as { title?: string; detail?: string };
  const retryAfter = headers.get('retry-after');
  replace(
    where,
    h('div', { class: 'notice error' }, `HTTP ${status}: ${problem.title ?? 'error'}. ${problem.detail ?? ''}`),
    retryAfter ? h('p', { class: 'hint', 'data-retry-after': retryAfter }, `Retry-After: ${retryAfter} s. Try again after that.`) : null,
    h('pre', {}, prettyJson(body)),
  );
}
