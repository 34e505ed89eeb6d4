import { h, replace } from '@vip/shared-schema/browser/dom';
import { OWNER_WEBHOOK_EVENTS } from '@vip/shared-schema/webhook-events';
import { checkboxGroup, handleSubmit } from './fields.js';
import { errorNotice, successNotice, time } from './messages.js';
import { api } from './session.js';

type Webhook = Awaited<ReturnType<typeof api.webhooks.list>>['webhooks'][number];
type Delivery = Awaited<ReturnType<typeof api.webhooks.deliveries>>['deliveries'][number];
type TestResult = Awaited<ReturnType<typeof api.webhooks.test>>;

/** How many of an endpoint's latest deliveries the console shows. */
const SHOWN_DELIVERIES = 10;

const STATUS_WORDS: Record<Delivery['status'], string> = {
  pending: 'retrying',
  delivered: 'delivered',
  failed: 'failed (gave up)',
  cancelled: 'cancelled (endpoint disabled)',
};

function lastAnswer(delivery: Delivery): string {
  if (delivery.last_error !== null) return delivery.last_error;
  return delivery.last_status_code !== null ? `HTTP ${delivery.last_status_code}` : 'not tried yet';
}

function outcomeText(result: TestResult): string {
  if (result.delivered) return `delivered (HTTP ${result.status_code})`;
  return `failed: ${result.status_code !== null ? `HTTP ${result.status_code}` : (result.error ?? 'no answer')}`;
}

function deliveriesTable(webhook: Webhook, deliveries: readonly Delivery[]): HTMLElement {
  if (deliveries.length === 0) return h('p', { class: 'hint' }, 'No delivery yet.');
  return h(
    'table',
    { class: 'stack deliveries' },
    h('caption', { class: 'visually-hidden' }, `Latest deliveries to ${webhook.url}`),
    h('thead', {}, h('tr', {}, ...['Event', 'Outcome', 'Attempts', 'Last answer', 'When'].map((name) => h('th', { scope: 'col' }, name)))),
    h(
      'tbody',
      {},
      ...deliveries.map((delivery) =>
        h(
          'tr',
          { 'data-status': delivery.status, 'data-event': delivery.event },
          h('td', { 'data-label': 'Event' }, delivery.event),
          h('td', { 'data-label': 'Outcome' }, STATUS_WORDS[delivery.status]),
          h('td', { 'data-label': 'Attempts' }, String(delivery.attempts)),
          h('td', { 'data-label': 'Last answer' }, lastAnswer(delivery)),
          h(
            'td',
            { 'data-label': 'When' },
            'happened ',
            time(delivery.occurred_at),
            delivery.last_attempt_at ? h('span', {}, ', last tried ', time(delivery.last_attempt_at)) : null,
            delivery.next_attempt_at ? h('span', {}, ', next try ', time(delivery.next_attempt_at)) : null,
          ),
        ),
      ),
    ),
  );
}

function webhookCard(webhook: Webhook, deliveries: readonly Delivery[], redraw: (notice?: HTMLElement) => void): HTMLElement {
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
        const text = `Test sent to ${webhook.url}: ${outcomeText(result)}, message ${result.message_id}.`;
        return result.delivered ? successNotice(text) : h('div', { class: 'notice warning', role: 'status' }, text);
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
    h('h4', {}, 'Latest deliveries'),
    deliveriesTable(webhook, deliveries),
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
    checkboxGroup('Events', 'events', OWNER_WEBHOOK_EVENTS),
    h('p', {}, h('button', { type: 'submit' }, 'Add endpoint')),
    status,
  );
  handleSubmit(form, status, async (data) => {
    const created = await api.webhooks.register({
      url: String(data.get('url')).trim(),
      events: data.getAll('events').map(String) as (typeof OWNER_WEBHOOK_EVENTS)[number][],
    });
    redraw(successNotice(`Endpoint added. Its signing secret, shown only now: `, h('code', { class: 'secret' }, created.secret)));
    return undefined;
  });
  return form;
}

export async function renderWebhooks(root: HTMLElement, _go: unknown, notice?: HTMLElement): Promise<void> {
  const { webhooks } = await api.webhooks.list();
  const deliveries = await Promise.all(
    webhooks.map(async (webhook) => (await api.webhooks.deliveries(webhook.webhook_id, { limit: SHOWN_DELIVERIES })).deliveries),
  );
  const redraw = (next?: HTMLElement) =>
    void renderWebhooks(root, _go, next)
      .then(() => root.querySelector('h1')?.focus())
      .catch((error) => root.append(errorNotice(error)));
  replace(
    root,
    h('h1', { tabindex: -1 }, 'Webhooks'),
    h('p', {}, 'Get told when something happens to your voices: enrollment, licences, deletion, blocked checks.'),
    notice ?? null,
    webhooks.length
      ? h('div', {}, ...webhooks.map((webhook, at) => webhookCard(webhook, deliveries[at]!, redraw)))
      : h('p', {}, 'No endpoint yet.'),
    webhooks.length ? h('p', {}, h('button', { type: 'button', class: 'secondary', onclick: () => redraw() }, 'Refresh deliveries')) : null,
    registerForm(redraw),
  );
}
