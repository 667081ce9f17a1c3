import './style.css';
import { ApiError, Session, User, del, errorText, get, post, setCsrfToken, setSignedOutHandler } from './api';
import { Ctx, Page, isOperator } from './app';
import { button, clear, field, h, input, link, notice } from './dom';
import { searchPath } from './lead_view';
import { route } from './router';
import { overviewPage } from './pages/overview';
import { leadPage, leadsPage } from './pages/leads';
import { buyingPage } from './pages/buying';
import { buyerEditPage, buyersPage } from './pages/buyers';
import { campaignsPage } from './pages/campaigns';
import { campaignSpecPage } from './pages/campaign_spec';
import { changeLogPage } from './pages/change_log';
import { reportsPage } from './pages/reports';
import { apiKeysPage, passwordPage, usersPage } from './pages/settings';
import { twoFactorPage } from './pages/two_factor';
import { settingsMenu, settingsPage } from './pages/settings_menu';
import { timeZonePage } from './pages/time_zone';
import { sellerAccountPage } from './pages/seller_account';
import { payoutsPage } from './pages/payouts';
import { getStartedPage } from './pages/get_started';
import { suppressionPage } from './pages/suppression';
import { statementsPage } from './pages/statements';
import { periodsPage } from './pages/periods';
import { ledgerPage } from './pages/ledger';
import { postbackEndpointPage, postbacksPage } from './pages/postbacks';
import { verticalPage, verticalsPage } from './pages/verticals';
import { setZone } from './zone';
import { SecondFactorChallenge, TwoFactorState, mustEnrol, secondFactorBody } from './two_factor';

const root = document.getElementById('app')!;
let user: User | null = null;
let twoFactor: TwoFactorState | undefined;
const ENROL = '/settings/two-factor';

interface Entry {
  pattern: string;
  page: Page;
  title: string;
  operatorOnly?: boolean;
  sellerOnly?: boolean;
  buyerOnly?: boolean;
  notSeller?: boolean;
  notBuyer?: boolean;
}
const pages: Entry[] = [
  { pattern: '/', page: overviewPage, title: 'Overview' },
  { pattern: '/leads', page: leadsPage, title: 'Leads' },
  { pattern: '/leads/:id', page: leadPage, title: 'Lead' },
  { pattern: '/buying', page: buyingPage, title: 'Buying', buyerOnly: true },
  { pattern: '/buyers', page: buyersPage, title: 'Buyers', operatorOnly: true },
  { pattern: '/buyers/new', page: buyerEditPage, title: 'New buyer', operatorOnly: true },
  { pattern: '/buyers/:id', page: buyerEditPage, title: 'Buyer', operatorOnly: true },
  { pattern: '/campaigns', page: campaignsPage, title: 'Campaigns' },
  { pattern: '/campaigns/:id/specification', page: campaignSpecPage, title: 'Campaign specification' },
  { pattern: '/reports', page: reportsPage, title: 'Reports' },
  { pattern: '/suppression', page: suppressionPage, title: 'Suppression lists', notSeller: true },
  { pattern: '/payouts', page: payoutsPage, title: 'Payouts', sellerOnly: true },
  { pattern: '/get-started', page: getStartedPage, title: 'Get started', sellerOnly: true },
  { pattern: '/statements', page: statementsPage, title: 'Statements' },
  { pattern: '/periods', page: periodsPage, title: 'Periods', operatorOnly: true },
  { pattern: '/ledger', page: ledgerPage, title: 'Ledger', operatorOnly: true },
  { pattern: '/settings/api-keys', page: apiKeysPage, title: 'API keys' },
  { pattern: '/settings/users', page: usersPage, title: 'Users', operatorOnly: true },
  { pattern: '/change-log', page: changeLogPage, title: 'Change log', operatorOnly: true },
  { pattern: '/settings/password', page: passwordPage, title: 'Password' },
  { pattern: ENROL, page: twoFactorPage, title: 'Two-factor sign-in' },
  { pattern: '/settings/time-zone', page: timeZonePage, title: 'Time zone' },
  { pattern: '/settings/account', page: sellerAccountPage, title: 'Account', sellerOnly: true },
  { pattern: '/settings/postbacks', page: postbacksPage, title: 'Postbacks', notBuyer: true },
  { pattern: '/settings/postbacks/:id', page: postbackEndpointPage, title: 'Postback endpoint', notBuyer: true },
  { pattern: '/settings/verticals', page: verticalsPage, title: 'Verticals' },
  { pattern: '/settings/verticals/:name', page: verticalPage, title: 'Vertical' },
  { pattern: '/settings', page: settingsPage, title: 'Settings' },
];

function go(path: string): void {
  history.pushState(null, '', path);
  void render();
}

// Links marked data-link are followed by the router; a modified click opens a tab as usual.
document.addEventListener('click', (ev) => {
  const a = (ev.target as Element | null)?.closest?.('a[data-link]') as HTMLAnchorElement | null;
  if (!a || ev.defaultPrevented || ev.button !== 0 || ev.metaKey || ev.ctrlKey || ev.shiftKey || ev.altKey) return;
  ev.preventDefault();
  go(a.getAttribute('href')!);
});
window.addEventListener('popstate', () => void render());
// A chart's width and a line chart's x labels are chosen for the size they are drawn at
// (chart.ts): crossing the phone width draws a page holding one again, so they still fit.
matchMedia('(max-width: 600px)').addEventListener('change', () => {
  if (root.querySelector('svg.chart')) void render();
});
setSignedOutHandler(() => {
  if (user) {
    user = null;
    void render();
  }
});

// The top bar's box: finds a lead from any page (Leads, searching; its own box keeps the filters).
function topSearch(): HTMLElement {
  const box = input({ type: 'search', name: 'q', placeholder: 'Find a lead', 'aria-label': 'Lead search', title: 'A lead id, an e-mail or a phone', autocomplete: 'off' });
  const form = h('form', { class: 'top-search', role: 'search', 'aria-label': 'Find a lead from any page' }, box);
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    go(searchPath(new URLSearchParams(), box.value));
  });
  return form;
}

function nav(u: User): HTMLElement {
  const here = location.pathname;
  // The main menu, in order; what a user sets up is under Settings (pages/settings_menu.ts).
  const items: [string, string][] = [['/', 'Overview'], ['/leads', 'Leads']];
  if (u.account === 'buyer') items.push(['/buying', 'Buying']);
  if (isOperator(u)) items.push(['/buyers', 'Buyers']);
  if (u.account !== 'buyer') items.push(['/campaigns', 'Campaigns']);
  if (u.account === 'seller') items.push(['/payouts', 'Payouts']);
  items.push(['/reports', 'Reports']);
  if (u.account !== 'seller') items.push(['/suppression', 'Suppression']);
  items.push(['/statements', 'Statements']);
  if (isOperator(u)) items.push(['/periods', 'Periods']);
  if (isOperator(u)) items.push(['/ledger', 'Ledger']);
  if (isOperator(u)) items.push(['/change-log', 'Change log']);
  items.push(['/settings', 'Settings']);
  const current = (p: string) => (p === '/' ? here === '/' : here === p || here.startsWith(p + '/'));
  return h(
    'header',
    // The operator's menu is the longest: its top bar holds the search box only where it fits.
    { class: isOperator(u) ? 'topbar topbar-full' : 'topbar' },
    h('a', { class: 'brand', href: '/', 'data-link': '1' }, 'leadflow'),
    h('nav', { 'aria-label': 'Main' }, h('ul', {}, items.map(([p, t]) => h('li', {}, link(p, t, { 'aria-current': current(p) ? 'page' : undefined }))))),
    topSearch(),
    h(
      'div',
      { class: 'who' },
      h('span', { class: 'who-name' }, `${u.name || u.email} (${u.account})`),
      button('Sign out', async () => {
        try {
          await del('/v1/session');
        } catch {
          /* the session is gone either way */
        }
        user = null;
        twoFactor = undefined;
        setCsrfToken('');
        history.pushState(null, '', '/');
        void render();
      }, { class: 'secondary', id: 'sign-out' }),
    ),
  );
}

function signIn(): void {
  clear(root);
  document.title = 'Sign in · leadflow';
  const email = field('email', 'E-mail', input({ type: 'email', autocomplete: 'username', required: true }));
  const password = field('password', 'Password', input({ type: 'password', autocomplete: 'current-password', required: true }));
  const status = h('div', { class: 'form-summary' });
  const form = h(
    'form',
    { class: 'card signin', novalidate: true },
    h('h1', {}, 'Sign in to leadflow'),
    status,
    email.wrapper,
    password.wrapper,
    h('button', { type: 'submit' }, 'Sign in'),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(status);
    try {
      const s = await post<Session | SecondFactorChallenge>('/v1/session', { email: email.control.value, password: password.control.value });
      if ('second_factor' in s) return secondStep(s);
      signedIn(s);
      await render();
    } catch (e) {
      const msg = e instanceof ApiError && e.status === 429 ? 'Too many failed sign-ins: wait a few minutes.' : e instanceof Error ? e.message : String(e);
      status.appendChild(notice(msg, 'error'));
      password.control.value = '';
      password.control.focus();
    }
  });
  root.appendChild(h('main', { class: 'center' }, form));
  email.control.focus();
}

function signedIn(s: Session): void {
  user = s.user;
  setZone(s.user.time_zone);
  twoFactor = s.two_factor;
  setCsrfToken(s.csrf_token);
}

// The sign-in's second step: a code from the app (or a recovery code) for the challenge the
// password step gave. A wrong code may be retried until the sign-in limits say 429; an expired
// challenge goes back to the password.
function secondStep(c: SecondFactorChallenge): void {
  clear(root);
  document.title = 'Two-factor sign-in · leadflow';
  const code = field('code', 'Code from your authenticator app', input({ inputmode: 'numeric', autocomplete: 'one-time-code', required: true }), 'or one of your recovery codes');
  const status = h('div', { class: 'form-summary' });
  const form = h('form', { class: 'card signin', novalidate: true, id: 'second-factor' }, h('h1', {}, 'Two-factor sign-in'), status, code.wrapper, h('button', { type: 'submit' }, 'Verify'));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear(status);
    try {
      signedIn(await post<Session>('/v1/session/second-factor', secondFactorBody(c.challenge, code.control.value)));
      await render();
    } catch (e) {
      if (e instanceof ApiError && e.status === 401 && /expired|challenge/.test(e.message)) {
        signIn();
        return;
      }
      const msg = e instanceof ApiError && e.status === 429 ? 'Too many failed sign-ins: wait a few minutes.' : e instanceof Error ? e.message : String(e);
      status.appendChild(notice(msg, 'error'));
      code.control.value = '';
      code.control.focus();
    }
  });
  root.appendChild(h('main', { class: 'center' }, form));
  code.control.focus();
}

async function render(): Promise<void> {
  // An operator who must enrol is asked again on each move (it may just have enrolled).
  if (user && mustEnrol(twoFactor)) user = null;
  if (!user) {
    try {
      signedIn(await get<Session>('/v1/session'));
    } catch {
      signIn();
      return;
    }
  }
  const u = user as User | null;
  if (!u) return signIn();
  if (mustEnrol(twoFactor) && location.pathname !== ENROL) history.replaceState(null, '', ENROL);
  const found = route(pages.map((p) => p.pattern), location.pathname);
  const entry = found ? pages.find((p) => p.pattern === found.pattern)! : null;
  clear(root);
  const main = h('main', { id: 'main', tabindex: -1 });
  const token = ++rendering;
  root.append(h('a', { class: 'skip', href: '#main' }, 'Skip to content'), nav(u), main);
  if (!entry || (entry.operatorOnly && !isOperator(u)) || (entry.sellerOnly && u.account !== 'seller') || (entry.buyerOnly && u.account !== 'buyer') || (entry.notSeller && u.account === 'seller') || (entry.notBuyer && u.account === 'buyer')) {
    document.title = 'Not found · leadflow';
    main.append(h('h1', {}, 'Not found'), h('p', {}, 'There is no such page here. '), link('/', 'Back to the overview'));
    return;
  }
  document.title = `${entry.title} · leadflow`;
  const ctx: Ctx = { user: u, params: found!.params, search: new URLSearchParams(location.search), go };
  // The page draws into `content`; below it, while the page waits for the API, "Loading…", and
  // if the API fails, what went wrong with a button that tries again.
  const content = h('div', { class: 'page' });
  const status = h('div', { class: 'page-status' }, h('p', { class: 'loading', role: 'status' }, 'Loading…'));
  if (entry.pattern.startsWith('/settings/')) main.append(settingsMenu(u, location.pathname));
  main.append(content, status);
  try {
    await entry.page(ctx, content);
    status.remove();
  } catch (e) {
    if (!user || token !== rendering) return;
    status.replaceChildren(
      h('div', { class: 'notice notice-error', role: 'alert' }, h('p', {}, errorText(e)), button('Try again', () => void render(), { id: 'retry' })),
    );
  }
}
let rendering = 0;

void render();
