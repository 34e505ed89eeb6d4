import { byId, h, prettyJson, replace } from '@vip/shared-schema/browser/dom';
import { setUpFileCheck } from './check-file.js';
import { renderProblem } from './problem.js';

/** The playground's script: renders the demo's outcomes, runs live calls, checks files, copies snippets. */

/** The page names the demo's path, so the script carries no route table. */
const DEMO_PATH = byId('outcomes').dataset.demoPath ?? '';
/** `production_responses`: what the gate itself answers, the bodies INTEGRATION tells a platform to code against. */
const PRODUCTION_TITLES: Record<string, string> = {
  approved: 'Approved: registered and licensed; synthesize, then redeem the token once',
  blocked: 'Blocked: registered, and your platform may not use it (here: no licence for this use)',
  no_registry_record: 'Not registered: the voice is unknown to the registry; the platform decides',
};
/** `possible_responses`: the specification's demo shapes, which the real gate does not answer. */
const SPEC_TITLES: Record<string, string> = {
  protected_licensed: 'Spec demo shape: licensed',
  protected_no_license: 'Spec demo shape: no licence',
  no_registry_record: 'Spec demo shape: not registered',
};

async function callDemo(): Promise<{ status: number; headers: Headers; body: unknown; ms: number }> {
  const started = performance.now();
  const response = await fetch(DEMO_PATH, { headers: { accept: 'application/json' } });
  const body = (await response.json()) as unknown;
  return { status: response.status, headers: response.headers, body, ms: Math.round(performance.now() - started) };
}

interface DemoBody {
  example_request?: unknown;
  variant?: string;
  production_responses?: Record<string, unknown>;
  possible_responses?: Record<string, unknown>;
}

/** One card per body, titled from `titles`, in the order `titles` lists them; `shape` says which set it belongs to. */
const outcomeCards = (shape: 'production' | 'spec', titles: Record<string, string>, bodies: Record<string, unknown> = {}) =>
  Object.keys(titles)
    .filter((name) => name in bodies)
    .map((name) =>
      h(
        'div',
        { class: 'card outcome', 'data-shape': shape, 'data-outcome': name },
        h('h4', {}, titles[name]!),
        h(
          'pre',
          { 'aria-label': `${shape === 'production' ? 'Gate response body' : 'Spec demo shape'}: ${name}` },
          prettyJson(bodies[name]),
        ),
      ),
    );

function renderOutcomes(body: unknown): void {
  const demo = body as DemoBody;
  replace(
    byId('outcomes'),
    h('p', {}, `Deployed variant: ${demo.variant ?? 'unknown'}. Example request body:`),
    h('pre', { 'aria-label': 'Example request body' }, prettyJson(demo.example_request)),
    h('h3', { id: 'production-title' }, 'What the gate returns: code against these'),
    h(
      'p',
      { class: 'hint' },
      'The bodies POST /api/v1/protect/pre-synthesis-check answers in this deployment (production_responses), always HTTP 200.',
    ),
    ...outcomeCards('production', PRODUCTION_TITLES, demo.production_responses),
    h('h3', { id: 'spec-title' }, "The specification's demo shapes"),
    h(
      'p',
      { class: 'hint' },
      'possible_responses: the three outcomes in the words and shapes the specification gives this demo endpoint, ' +
        'shown so that you can hold the service against that specification. The gate never answers them: ' +
        'POST /api/v1/protect/pre-synthesis-check answers the bodies above, so code against those, not these.',
    ),
    ...outcomeCards('spec', SPEC_TITLES, demo.possible_responses),
  );
}

async function loadOutcomes(): Promise<void> {
  try {
    const { status, headers, body } = await callDemo();
    if (status === 200) renderOutcomes(body);
    else renderProblem(byId('outcomes'), status, body, headers);
  } catch (error) {
    replace(byId('outcomes'), h('div', { class: 'notice error' }, `The demo could not be reached: ${(error as Error).message}`));
  }
}

async function liveCall(button: HTMLButtonElement): Promise<void> {
  const result = byId('live-result');
  button.disabled = true;
  try {
    const { status, headers, body, ms } = await callDemo();
    const shown = ['content-type', 'ratelimit', 'ratelimit-policy', 'retry-after', 'x-request-id']
      .map((name) => [name, headers.get(name)] as const)
      .filter(([, value]) => value !== null)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\n');
    replace(
      result,
      h('p', { class: `notice ${status === 200 ? 'success' : 'error'}` }, `HTTP ${status} in ${ms} ms`),
      h('h3', {}, 'Headers'),
      h('pre', { 'aria-label': 'Response headers' }, shown),
      h('h3', {}, 'Body'),
      h('pre', { 'aria-label': 'Response body', id: 'live-body' }, prettyJson(body)),
    );
  } catch (error) {
    replace(result, h('div', { class: 'notice error' }, `The call failed: ${(error as Error).message}`));
  } finally {
    button.disabled = false;
  }
}

async function copy(snippetId: string): Promise<void> {
  const status = byId('copy-status');
  const text = byId(snippetId).textContent ?? '';
  try {
    await navigator.clipboard.writeText(text);
    status.textContent = `Copied "${byId(`${snippetId}-title`).textContent}" to the clipboard.`;
  } catch {
    status.textContent = 'Copying was refused by the browser: select the text and copy it by hand.';
  }
}

const callButton = byId<HTMLButtonElement>('call-demo');
callButton.addEventListener('click', () => void liveCall(callButton));
for (const button of document.querySelectorAll<HTMLButtonElement>('button[data-copy]')) {
  button.addEventListener('click', () => void copy(button.dataset.copy ?? ''));
}
setUpFileCheck();
void loadOutcomes();
