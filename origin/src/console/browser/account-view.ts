import { h, replace } from '@vip/shared-schema/browser/dom';
import { limits } from '@vip/shared-schema/limits';
import { handleSubmit } from './fields.js';
import { successNotice } from './messages.js';
import { changePassword, currentEmail, currentUserId, signIn, signOut, signUp } from './session.js';

type Go = (hash: string) => void;

function credentialsForm(
  purpose: 'sign-in' | 'sign-up',
  submit: (email: string, password: string) => Promise<void>,
  go: Go,
): HTMLFormElement {
  const id = (name: string) => `${purpose}-${name}`;
  const status = h('div', { 'aria-live': 'polite' });
  const newPassword = purpose === 'sign-up';
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': id('title'), novalidate: true },
    h('h2', { id: id('title') }, newPassword ? 'Create an account' : 'Sign in'),
    h('label', { for: id('email') }, 'Email'),
    h('input', { id: id('email'), name: 'email', type: 'email', autocomplete: 'email', required: true }),
    h('label', { for: id('password') }, 'Password'),
    newPassword ? h('p', { class: 'hint', id: id('password-hint') }, `At least ${limits.passwordMinLength} characters.`) : null,
    h('input', {
      id: id('password'),
      name: 'password',
      type: 'password',
      autocomplete: newPassword ? 'new-password' : 'current-password',
      required: true,
      minlength: newPassword ? limits.passwordMinLength : null,
      'aria-describedby': newPassword ? id('password-hint') : null,
    }),
    h('p', {}, h('button', { type: 'submit' }, newPassword ? 'Create account' : 'Sign in')),
    status,
  );
  handleSubmit(form, status, async (data) => {
    await submit(String(data.get('email')), String(data.get('password')));
    go('#/voices');
    return undefined;
  });
  return form;
}

export async function renderSignIn(root: HTMLElement, go: Go): Promise<void> {
  if (location.hash !== '#/sign-in') history.replaceState(null, '', '#/sign-in');
  replace(
    root,
    h('h1', {}, 'Owner console'),
    h(
      'p',
      {},
      'Protect your voice: enroll it, decide which platforms may synthesize it, and see every time one asked. Sign in, or create an account.',
    ),
    h('div', { class: 'columns' }, credentialsForm('sign-in', signIn, go), credentialsForm('sign-up', signUp, go)),
  );
}

function passwordForm(): HTMLFormElement {
  const status = h('div', { 'aria-live': 'polite' });
  const form = h(
    'form',
    { class: 'card', 'aria-labelledby': 'password-title', novalidate: true },
    h('h2', { id: 'password-title' }, 'Change password'),
    h('label', { for: 'current-password' }, 'Current password'),
    h('input', { id: 'current-password', name: 'current', type: 'password', autocomplete: 'current-password', required: true }),
    h('label', { for: 'new-password' }, 'New password'),
    h(
      'p',
      { class: 'hint', id: 'new-password-hint' },
      `At least ${limits.passwordMinLength} characters. Every other session of your account ends.`,
    ),
    h('input', {
      id: 'new-password',
      name: 'new',
      type: 'password',
      autocomplete: 'new-password',
      required: true,
      minlength: limits.passwordMinLength,
      'aria-describedby': 'new-password-hint',
    }),
    h('p', {}, h('button', { type: 'submit' }, 'Change password')),
    status,
  );
  handleSubmit(form, status, async (data) => {
    await changePassword(String(data.get('current')), String(data.get('new')));
    form.reset();
    return successNotice('Password changed. Your other sessions are signed out.');
  });
  return form;
}

export async function renderAccount(root: HTMLElement, go: Go): Promise<void> {
  replace(
    root,
    h('h1', {}, 'Account'),
    h(
      'p',
      { id: 'signed-in-as' },
      'Signed in as ',
      h('strong', {}, currentEmail() ?? ''),
      ' (user id ',
      h('code', {}, currentUserId() ?? ''),
      ').',
    ),
    h(
      'p',
      { class: 'hint' },
      'This tab keeps your session until you sign out or close it; closing the tab signs you out. Sessions renew themselves while you use them and end after 30 days.',
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: async () => {
          await signOut();
          go('#/sign-in');
        },
      },
      'Sign out',
    ),
    passwordForm(),
  );
}
