import { ApiError, User, del, errorText, get, post, put } from '../api';
import { Ctx } from '../app';
import { Field, button, field, h, input, named, notice, select, table } from '../dom';
import { FormErrors } from '../form';
import { counted, dateTime } from '../format';
import { loadNames } from '../names';
import { shownOnce } from '../secret';
import { isStale, staleNotice } from '../versions';

type Rec = Record<string, any>;
const SCOPES = ['leads:write', 'leads:read', 'buyers:read', 'buyers:write', 'reports:read', 'returns:write', 'admin'];
const SELLER_SCOPES = ['leads:write', 'leads:read', 'reports:read'];
// A buyer's buyers:write reaches its own account only (pause, resume, what the operator opened).
const BUYER_SCOPES = ['leads:read', 'returns:write', 'reports:read', 'buyers:write'];

/** Settings, then API Keys: the operator manages every key; a seller or buyer user its own
 *  account's keys, on the standard plan. */
export async function apiKeysPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const operator = ctx.user.account === 'operator';
  const [keys, sellers, known] = await Promise.all([get<{ data: Rec[] }>('/v1/api-keys'), operator ? get<{ data: Rec[] }>('/v1/sellers') : Promise.resolve({ data: [] as Rec[] }), loadNames(ctx.user.account)]);
  const scopesOffered = operator ? SCOPES : ctx.user.account === 'buyer' ? BUYER_SCOPES : SELLER_SCOPES;
  const secret = h('div');
  const msg = h('div');
  const list = h('div');
  root.append(h('h1', {}, 'API keys'), h('p', { class: 'muted' }, 'Keys authenticate Surface A (Authorization: Bearer). A key is shown once, when it is made; only its last characters are kept for display. Keep keys on your servers, never in a web page or a public repository. Revoking takes effect on its next request.'), secret, msg, list);
  // The list is drawn again after each change, so a key just made or revoked shows at once.
  const draw = (all: Rec[]) => {
    const live = all.filter((k) => !k.revoked_at);
    const revoked = all.filter((k) => k.revoked_at);
    list.replaceChildren(
      table(
        ['Name', 'Account', 'Plan', 'Scopes', 'Key', 'Created', 'Last used', ''],
        [...live, ...revoked].map((k) => [
          k.name || '(unnamed)',
          h('span', {}, `${k.account} `, k.seller_id ? named(known.get(k.seller_id), k.seller_id) : k.buyer_id ? named(known.get(k.buyer_id), k.buyer_id) : null),
          k.plan,
          (k.scopes ?? []).join(' '),
          h('span', { class: 'mono' }, k.key_hint ?? '—'),
          dateTime(k.created_at),
          k.last_used_at ? dateTime(k.last_used_at) : '—',
          k.revoked_at
            ? h('span', { class: 'badge badge-revoked' }, `revoked ${dateTime(k.revoked_at)}`)
            : button('Revoke', async () => {
                if (!confirm(`Revoke the key ${k.name || k.key_id}? Requests with it will be refused at once.`)) return;
                try {
                  await del(`/v1/api-keys/${encodeURIComponent(k.key_id)}`, k.version);
                  await refresh();
                } catch (e) {
                  msg.replaceChildren(isStale(e) ? staleNotice('API key', () => ctx.go('/settings/api-keys')) : notice(errorText(e), 'error'));
                }
              }, { class: 'danger small', 'aria-label': `Revoke ${k.name || k.key_id}` }),
        ]),
        `${counted(live.length, 'active key')}, ${revoked.length} revoked`,
        'No API key yet: create one below, then send leads with it.',
      ),
    );
  };
  const refresh = async () => draw((await get<{ data: Rec[] }>('/v1/api-keys')).data);
  draw(keys.data);

  const name = field('name', 'Name', input({ required: true }));
  const account = field('seller_id', 'Account', select([['', 'operator'], ...sellers.data.map((s) => [s.seller_id, `seller: ${s.name}`] as [string, string])]));
  const plan = field('plan', 'Plan', select(['standard', 'enterprise']));
  const boxes = scopesOffered.map((s) => h('label', { class: 'check' }, h('input', { type: 'checkbox', value: s, name: 'scopes', checked: s !== 'admin' }), ` ${s}`));
  const scopesField: Field = { name: 'scopes', control: boxes[0].querySelector('input')!, wrapper: h('fieldset', { class: 'field' }, h('legend', {}, 'Scopes'), h('div', { class: 'checks' }, boxes)), error: h('p', { class: 'field-error' }) };
  scopesField.wrapper.appendChild(scopesField.error);
  const fields = operator ? [name, account, plan, scopesField] : [name, scopesField];
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'grid-form', novalidate: true }, errors.element, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create key')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const scopes = boxes.map((b) => b.querySelector('input')!).filter((i) => i.checked).map((i) => i.value);
    const body: Rec = operator ? { name: name.control.value, plan: plan.control.value, scopes } : { name: name.control.value, scopes };
    if (operator && account.control.value) {
      body.seller_id = account.control.value;
      body.scopes = scopes.filter((s) => SELLER_SCOPES.includes(s));
    }
    try {
      const made = await post<{ data: Rec }>('/v1/api-keys', body);
      errors.clear();
      secret.replaceChildren(shownOnce(`API key ${made.data.name}`, made.data.key));
      // Back to the defaults (the scopes ticked as at first: their defaultChecked), ready for
      // the next key.
      form.reset();
      (secret.querySelector('button') as HTMLElement | null)?.focus();
      await refresh().catch((e) => msg.replaceChildren(notice(errorText(e), 'error')));
    } catch (e) {
      errors.show(e);
    }
  });
  root.append(h('section', { class: 'card' }, h('h2', {}, 'New API key'), form));
}

export async function usersPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const [users, sellers, known] = await Promise.all([get<{ data: User[] }>('/v1/users'), get<{ data: Rec[] }>('/v1/sellers'), loadNames(ctx.user.account)]);
  const msg = h('div');
  root.append(h('h1', {}, 'Users'), h('p', { class: 'muted' }, 'People who sign in to this dashboard. A seller user sees only its seller\'s leads and reports.'), msg);
  root.append(
    table(
      ['Name', 'E-mail', 'Account', 'Active', 'Last sign-in', ''],
      users.data.map((u) => [
        u.name,
        u.email,
        h('span', {}, `${u.account} `, u.seller_id ? named(known.get(u.seller_id), u.seller_id) : u.buyer_id ? named(known.get(u.buyer_id), u.buyer_id) : null),
        u.active ? 'yes' : 'no',
        dateTime(u.last_login_at),
        u.id === ctx.user.id
          ? h('span', { class: 'muted' }, 'you')
          : button(u.active ? 'Disable' : 'Enable', async () => {
              try {
                await put(`/v1/users/${encodeURIComponent(u.id)}`, { active: !u.active }, u.version);
                ctx.go('/settings/users');
              } catch (e) {
                msg.replaceChildren(isStale(e) ? staleNotice('user', () => ctx.go('/settings/users')) : notice(String((e as Error).message), 'error'));
              }
            }, { class: 'secondary small', 'aria-label': `${u.active ? 'Disable' : 'Enable'} ${u.email}` }),
      ]),
    ),
  );
  const fields = [
    field('email', 'E-mail', input({ type: 'email', autocomplete: 'off' })),
    field('name', 'Name', input()),
    field('password', 'Password', input({ type: 'password', autocomplete: 'new-password' }), 'at least the length the server asks for'),
    field('account', 'Account', select(['operator', 'seller', 'buyer'], 'seller')),
    field('seller_id', 'Seller (seller account)', select(sellers.data.map((s) => [s.seller_id, `${s.name} (${s.seller_id})`] as [string, string]))),
    field('buyer_id', 'Buyer id (buyer account)', input()),
  ];
  const errors = new FormErrors(fields);
  const form = h('form', { class: 'grid-form', novalidate: true }, errors.element, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create user')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const v: Rec = {};
    for (const f of fields) v[f.name] = f.control.value;
    const body: Rec = { email: v.email, name: v.name, password: v.password, account: v.account };
    if (v.account === 'seller') body.seller_id = v.seller_id;
    if (v.account === 'buyer') body.buyer_id = v.buyer_id;
    try {
      await post('/v1/users', body);
      ctx.go('/settings/users');
    } catch (e) {
      errors.show(e);
    }
  });
  root.append(h('section', { class: 'card' }, h('h2', {}, 'New user'), form));
}

export function passwordPage(_ctx: Ctx, root: HTMLElement): void {
  const current = field('current_password', 'Current password', input({ type: 'password', autocomplete: 'current-password' }));
  const next = field('new_password', 'New password', input({ type: 'password', autocomplete: 'new-password' }));
  const again = field('new_password_again', 'New password, again', input({ type: 'password', autocomplete: 'new-password' }));
  const fields = [current, next, again];
  const errors = new FormErrors(fields);
  const done = h('div', { role: 'status' });
  const form = h('form', { class: 'card narrow', novalidate: true }, errors.element, fields.map((f) => f.wrapper), h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Change password')), done);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    done.replaceChildren();
    if (next.control.value !== again.control.value) {
      errors.show(new ApiError(400, 'the passwords differ', [{ field: 'new_password_again', message: 'does not match the new password' }]));
      return;
    }
    try {
      await post('/v1/session/password', { current_password: current.control.value, new_password: next.control.value });
      errors.clear();
      form.reset();
      done.replaceChildren(notice('Password changed. Your other sessions were signed out.', 'ok'));
    } catch (e) {
      errors.show(e);
    }
  });
  root.append(h('h1', {}, 'Change your password'), form);
}
