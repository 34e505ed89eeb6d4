import { h, replace } from '../../../../shared-schema/src/browser/dom.js';
import { WEBHOOK_EVENTS } from '../../../../shared-schema/src/enums.js';
import { checkboxGroup, handleSubmit } from './fields.js';
import { errorNotice, successNotice, time } from './messages.js';
import { api } from './session.js';

type Webhook = Awaited<ReturnType<typeof api.webhooks.list>>['webhooks'][number];
type TestResult = Awaited<ReturnType<typeof api.webhooks.test>>;

/**
 * Outcomes of the test deliveries sent from this tab, newest first, per endpoint. The origin lists
 * no delivery history yet, so the console shows what it saw itself.
 */
const testOutcomes = new Map<string, { at: string; result: TestResult }[]>();

function outcomeText(result: TestResult): string {
  if (result.delivered) return `delivered (HTTP ${result.status_code})`;
  return `failed: ${result.status_code !== null ? `HTTP ${result.status_code}` : (result.error ?? 'no answer')}`;
}

function webhookCard(webhook: Webhook, redraw: (notice?: HTMLElement) => void): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' });
  const act = (label: string, run: () => Promise<HTMLElement | undefined>, className = 'secondary') =>
    h(
      'button',
      {
        type: 'button',
        class: className,
        onclick: async () => {
          try {
            redraw(await run());
          } catch (error) {
            replace(status, errorNotice(error));
          }
        },
      },
      label,
    );
  const outcomes = testOutcomes.get(webhook.webhook_id) ?? [];
  return h(
    'article',
    { class: 'card', 'data-webhook': webhook.webhook_id, 'aria-label': `Endpoint ${webhook.url}` },
    h('h3', {}, h('code', {}, webhook.url)),
    h('p', {}, `Events: ${webhook.events.join(', ')}`),
    h(
      'p',
      {},
      'Registered ',
      time(webhook.created_at),
      webhook.disabled_at ? h('strong', {}, '. Disabled (the receiver answered 410 Gone) ') : '',
      webhook.disabled_at ? time(webhook.disabled_at) : '',
    ),
    webhook.previous_secret_valid_until
      ? h('p', { class: 'hint' }, 'The previous secret also signs until ', time(webhook.previous_secret_valid_until), '.')
      : null,
    h(
      'div',
      { class: 'row' },
      act(`Send a test to ${webhook.url}`, async () => {
        const result = await api.webhooks.test(webhook.webhook_id);
        testOutcomes.set(webhook.webhook_id, [{ at: new Date().toISOString(), result }, ...outcomes].slice(0, 5));
        return undefined;
      }),
      act(`Rotate the secret of ${webhook.url}`, async () => {
        const rotated = await api.webhooks.rotateSecret(webhook.webhook_id);
        return successNotice(
          'New signing secret, shown only now: ',
          h('code', { class: 'secret' }, rotated.secret),
          '. The old one keeps signing until ',
          time(rotated.previous_secret_valid_until),
          '.',
        );
      }),
      webhook.disabled_at
        ? act(`Enable ${webhook.url} again`, async () => {
            await api.webhooks.enable(webhook.webhook_id);
            return successNotice(`${webhook.url} receives events again.`);
          })
        : null,
      act(
        `Remove ${webhook.url}`,
        async () => {
          await api.webhooks.delete(webhook.webhook_id);
          return successNotice(`${webhook.url} removed; it receives nothing more.`);
        },
        'danger',
      ),
    ),
    h('h4', {}, 'Last test deliveries'),
    outcomes.length
      ? h(
          'ul',
          { class: 'deliveries' },
          ...outcomes.map(({ at, result }) => h('li', {}, time(at), `: ${outcomeText(result)}, message ${result.message_id}`)),
        )
      : h('p', { class: 'hint' }, 'None sent from this tab.'),
    status,
  );
}

function registerForm(redraw: (notice?: HTMLElement) => void): HTMLElement {
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'register-title', novalidate: true },
    h('h2', { id: 'register-title' }, 'Add an endpoint'),
    h('label', { for: 'webhook-url' }, 'URL'),
    h('p', { class: 'hint', id: 'webhook-url-hint' }, 'An https address that answers 2xx. Deliveries are signed (Standard Webhooks).'),
    h('input', { id: 'webhook-url', name: 'url', type: 'url', required: true, 'aria-describedby': 'webhook-url-hint', inputmode: 'url' }),
    checkboxGroup('Events', 'events', WEBHOOK_EVENTS),
    h('p', {}, h('button', { type: 'submit' }, 'Add endpoint')),
    status,
  );
  handleSubmit(form, status, async (data) => {
    const created = await api.webhooks.register({
      url: String(data.get('url')).trim(),
      events: data.getAll('events').map(String) as (typeof WEBHOOK_EVENTS)[number][],
    });
    redraw(successNotice(`Endpoint added. Its signing secret, shown only now: `, h('code', { class: 'secret' }, created.secret)));
    return undefined;
  });
  return form;
}

export async function renderWebhooks(root: HTMLElement, _go: unknown, notice?: HTMLElement): Promise<void> {
  const { webhooks } = await api.webhooks.list();
  const redraw = (next?: HTMLElement) =>
    void renderWebhooks(root, _go, next)
      .then(() => root.querySelector('h1')?.focus())
      .catch((error) => root.append(errorNotice(error)));
  replace(
    root,
    h('h1', { tabindex: -1 }, 'Webhooks'),
    h('p', {}, 'Get told when something happens to your voices: enrollment, licences, deletion, blocked checks.'),
    notice ?? null,
    webhooks.length ? h('div', {}, ...webhooks.map((webhook) => webhookCard(webhook, redraw))) : h('p', {}, 'No endpoint yet.'),
    registerForm(redraw),
  );
}
