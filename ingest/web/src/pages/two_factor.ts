// Settings, then Two-factor sign-in: enrolment (a QR code drawn here, the secret, a first code,
// then the recovery codes, shown once) and turning it off (the password and a code).
import { Session, get, post } from '../api';
import { Ctx } from '../app';
import { button, field, h, input, notice } from '../dom';
import { FormErrors } from '../form';
import { Enrolment, TwoFactorState, groupSecret, qrSvg } from '../two_factor';

export async function twoFactorPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const s = await get<Session>('/v1/session');
  const state = s.two_factor;
  root.append(h('h1', {}, 'Two-factor sign-in'));
  if (state?.enabled) return enabledView(ctx, root, state);
  if (state?.required)
    root.append(notice('Operators of this installation must sign in with a second factor. Set it up to go on.', 'error'));
  root.append(
    h('p', { class: 'muted' }, 'After your password, sign-in will ask for a six-digit code from an authenticator app on your phone (any app that reads otpauth QR codes).'),
  );
  const place = h('div');
  const start = button('Set up two-factor sign-in', async () => {
    try {
      const e = await post<Enrolment>('/v1/session/two-factor/enrol', {});
      start.remove();
      place.replaceChildren(enrolView(ctx, e));
      (place.querySelector('input') as HTMLInputElement | null)?.focus();
    } catch (err) {
      place.replaceChildren(notice((err as Error).message, 'error'));
    }
  }, { id: 'two-factor-start' });
  root.append(start, place);
}

function enrolView(ctx: Ctx, e: Enrolment): HTMLElement {
  const code = field('code', 'Code from the app', input({ inputmode: 'numeric', autocomplete: 'one-time-code', maxlength: 6 }));
  const errors = new FormErrors([code]);
  const after = h('div');
  const form = h('form', { class: 'card narrow', novalidate: true, id: 'two-factor-confirm' }, errors.element, code.wrapper, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Turn on')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const done = await post<{ recovery_codes: string[] }>('/v1/session/two-factor/confirm', { code: code.control.value.trim() });
      form.remove();
      after.replaceChildren(recoveryCodes(ctx, done.recovery_codes));
    } catch (err) {
      errors.show(err);
    }
  });
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, '1. Scan this code with the app'),
    h('div', { class: 'qr-box' }, qrSvg(e.otpauth_uri, 'QR code of the two-factor secret')),
    h('p', {}, 'Or type the secret by hand: ', h('output', { class: 'secret mono', id: 'two-factor-secret' }, groupSecret(e.secret))),
    h('p', { class: 'muted' }, 'The secret is shown only now. Account: leadflow, six digits, every 30 seconds.'),
    h('h2', {}, '2. Type the code it shows'),
    form,
    after,
  );
}

function recoveryCodes(ctx: Ctx, codes: string[]): HTMLElement {
  return h(
    'div',
    { class: 'notice notice-warn', role: 'alert' },
    h('p', {}, h('strong', {}, 'Two-factor sign-in is on. '), 'Keep these recovery codes somewhere safe: each signs you in once without the app. They are shown only this once.'),
    h('ul', { class: 'mono recovery-codes', id: 'recovery-codes' }, codes.map((c) => h('li', {}, c))),
    button('Done', () => ctx.go('/'), { id: 'two-factor-done' }),
  );
}

function enabledView(ctx: Ctx, root: HTMLElement, state: TwoFactorState): void {
  root.append(
    h('p', {}, `Two-factor sign-in is on. Recovery codes left: ${state.recovery_codes_left}.`),
  );
  const password = field('password', 'Password', input({ type: 'password', autocomplete: 'current-password' }));
  const code = field('code', 'Code from the app, or a recovery code', input({ autocomplete: 'one-time-code' }));
  const errors = new FormErrors([password, code]);
  const form = h('form', { class: 'card narrow', novalidate: true }, h('h2', {}, 'Turn it off'), errors.element, password.wrapper, code.wrapper, h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'danger' }, 'Turn off')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const typed = code.control.value.replace(/\s+/g, '');
    const body: Record<string, string> = { password: password.control.value };
    if (/^\d{6}$/.test(typed)) body.code = typed;
    else body.recovery_code = typed;
    try {
      await post('/v1/session/two-factor/disable', body);
      ctx.go('/settings/two-factor');
    } catch (err) {
      errors.show(err);
    }
  });
  root.append(form);
}
