import { h, prettyJson, replace } from '@vip/shared-schema/browser/dom';

/** An RFC 9457 problem as the service answered it: its title and detail in words, then the body. */
export function renderProblem(where: HTMLElement, status: number, body: unknown): void {
  const problem = body as { title?: string; detail?: string };
  replace(
    where,
    h('div', { class: 'notice error' }, `HTTP ${status}: ${problem.title ?? 'error'}. ${problem.detail ?? ''}`),
    h('pre', {}, prettyJson(body)),
  );
}
