import { h, replace } from '@vip/shared-schema/browser/dom';
import { errorNotice } from './messages.js';

/** A fieldset of checkboxes, one per value, each labelled by its value; read back with `FormData.getAll(name)`. */
export function checkboxGroup(legend: string, name: string, values: readonly string[]): HTMLFieldSetElement {
  return h(
    'fieldset',
    {},
    h('legend', {}, legend),
    ...values.map((value) =>
      h(
        'div',
        { class: 'row' },
        h('input', { type: 'checkbox', name, value, id: `${name}-${value}` }),
        h('label', { for: `${name}-${value}`, class: 'inline' }, value),
      ),
    ),
  );
}

/**
 * Submits `form` through `submit` (with the form's data) instead of navigating: the submit button
 * is disabled meanwhile, and what `submit` returns, or the error it throws, is shown in `status`.
 */
export function handleSubmit(form: HTMLFormElement, status: HTMLElement, submit: (data: FormData) => Promise<Node | undefined>): void {
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const button = form.querySelector<HTMLButtonElement>('button[type="submit"]');
    if (button) button.disabled = true;
    replace(status);
    try {
      const shown = await submit(new FormData(form));
      if (shown) replace(status, shown);
    } catch (error) {
      replace(status, errorNotice(error));
    } finally {
      if (button) button.disabled = false;
    }
  });
}
