import { h } from '../../../../shared-schema/src/browser/dom.js';

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
