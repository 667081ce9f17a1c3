// Settings: one menu (the top bar's "Settings") holding what a user sets up. Each settings page
// shows this menu above it; /settings lists it.
import { User, get } from '../api';
import { Ctx, isOperator } from '../app';
import { h, link } from '../dom';
import { zone } from '../zone';

export interface SettingsEntry {
  path: string;
  title: string;
  what: string;
  operatorOnly?: boolean;
  notBuyer?: boolean;
  sellerOnly?: boolean;
}

/** The settings, in the menu's order. */
export const SETTINGS: SettingsEntry[] = [
  { path: '/settings/account', title: 'Account', what: "your account as the operator set it: payout, your statements' time zone", sellerOnly: true },
  { path: '/settings/api-keys', title: 'API keys', what: 'keys that post and read leads' },
  { path: '/settings/users', title: 'Users', what: 'who signs in to the dashboard', operatorOnly: true },
  { path: '/settings/password', title: 'Password', what: 'change your password' },
  { path: '/settings/two-factor', title: 'Two-factor', what: 'a code from an app at sign-in' },
  { path: '/settings/time-zone', title: 'Time zone', what: 'the zone times and days are shown in' },
  { path: '/settings/postbacks', title: 'Postbacks', what: 'endpoints told when your leads are sold, unsold, returned or settled', notBuyer: true },
  { path: '/settings/verticals', title: 'Verticals', what: "each vertical's fields and rules: duplicates, shared sales, second chances" },
];

/** The settings `u` may open. */
export function settingsFor(u: User): SettingsEntry[] {
  return SETTINGS.filter((e) => (!e.operatorOnly || isOperator(u)) && (!e.notBuyer || u.account !== 'buyer') && (!e.sellerOnly || u.account === 'seller'));
}

/** The settings menu, the page at `here` marked current. */
export function settingsMenu(u: User, here: string): HTMLElement {
  return h(
    'nav',
    { class: 'subnav', 'aria-label': 'Settings' },
    h('ul', {}, settingsFor(u).map((e) => h('li', {}, link(e.path, e.title, { 'aria-current': here === e.path || here.startsWith(e.path + '/') ? 'page' : undefined })))),
  );
}

/** The line saying which zone a page's times and days are in, linking to where it is chosen. */
export function zoneNote(): HTMLElement {
  return h('p', { class: 'muted zone-note' }, `Times and days in ${zone()} (`, link('/settings/time-zone', 'change'), ').');
}

/** /settings: every setting with what it is for; a seller with no lead yet is pointed to the
 *  first-run guide (a list it cannot read leaves the pointer out). */
export async function settingsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  root.append(
    h('h1', {}, 'Settings'),
    h('ul', { class: 'settings-list' }, settingsFor(ctx.user).map((e) => h('li', {}, link(e.path, e.title), h('span', { class: 'muted' }, ` — ${e.what}`)))),
  );
  if (ctx.user.account !== 'seller') return;
  const none = await get<{ data: unknown[] }>('/v1/leads?limit=1').then((p) => p.data.length === 0, () => false);
  if (none) root.append(h('p', { id: 'get-started-hint' }, 'No lead yet? ', link('/get-started', 'Get started step by step'), ': a key, a command to copy, your first lead arriving.'));
}
