// A seller's first-run guide: make an API key here (shown once), copy a ready curl command that
// posts a sample lead with it to this server, and watch that lead arrive (src/arrival.ts), with
// its status and payout and a link to it.
import { get, post } from '../api';
import { Ctx } from '../app';
import { button, field, h, input, link, notice } from '../dom';
import { FormErrors } from '../form';
import { money } from '../format';
import { watchArrivals } from '../arrival';
import { KEY_PLACEHOLDER, curlCommand, guideVertical, sampleLead } from '../first_run';
import { shownOnce } from '../secret';
import { unsoldHint } from '../unsold';

type Rec = Record<string, any>;

function copyButton(text: () => string, id: string): HTMLElement {
  const said = h('span', { role: 'status', class: 'muted' });
  const b = button('Copy the command', async () => {
    try {
      await navigator.clipboard.writeText(text());
      said.textContent = ' Copied.';
    } catch {
      said.textContent = ' Select the text and copy it.';
    }
  }, { id });
  return h('span', {}, b, said);
}

function arrived(l: Rec): HTMLElement {
  const d = l.distribution ?? {};
  const why = unsoldHint(l);
  return h(
    'div',
    { class: 'notice notice-ok', id: 'arrived' },
    h('p', {}, h('strong', {}, 'Your lead arrived. '), link(`/leads/${encodeURIComponent(l.lead_id)}`, `Open lead ${l.lead_id}`, { class: 'mono' })),
    h('dl', { class: 'props' }, h('dt', {}, 'Status'), h('dd', { id: 'arrived-status' }, String(l.status ?? '—')), h('dt', {}, 'Your payout'), h('dd', { id: 'arrived-payout' }, typeof d.payout === 'number' ? money(d.payout, d.currency) : '—'), why ? [h('dt', {}, 'Why not sold'), h('dd', {}, why)] : null),
    l.status === 'pending' ? h('p', { class: 'muted' }, 'Being offered to buyers: this updates when it is decided.') : null,
  );
}

export async function getStartedPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const [campaigns, newest] = await Promise.all([
    get<{ data: Rec[] }>('/v1/campaigns').catch(() => ({ data: [] as Rec[] })),
    get<{ data: Rec[] }>('/v1/leads?limit=1'),
  ]);
  const vertical = guideVertical(campaigns.data);
  // The vertical's published fields, for the ones it requires (none by default).
  const fields = await get<Rec>(`/api/v1/fields/${encodeURIComponent(vertical)}`).then((f) => (Array.isArray(f.fields) ? f.fields : []), () => []);
  const lead = sampleLead(vertical, fields, String(Date.now()).slice(-6));
  const origin = location.origin;
  let key = KEY_PLACEHOLDER;
  const command = h('code', { id: 'curl' }, curlCommand(origin, key, lead));

  const step2Note = h('p', { class: 'muted' }, `Make a key in step 1 first: ${KEY_PLACEHOLDER} is where it goes.`);

  // Step 1: a key, made here.
  const keyBox = h('div');
  const name = field('name', 'Key name', input({ required: true, value: 'first key' }));
  const errors = new FormErrors([name]);
  const form = h('form', { class: 'grid-form', novalidate: true, id: 'guide-key' }, errors.element, name.wrapper, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Make the key')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const made = await post<{ data: Rec }>('/v1/api-keys', { name: name.control.value, scopes: ['leads:write', 'leads:read', 'reports:read'] });
      errors.clear();
      key = made.data.key;
      keyBox.replaceChildren(shownOnce(`API key ${made.data.name}`, key));
      form.remove();
      command.textContent = curlCommand(origin, key, lead);
      step2Note.textContent = 'The command holds your new key: run it in a terminal.';
    } catch (e) {
      errors.show(e);
    }
  });

  // Step 3: the lead arriving.
  const waiting = h('div', { id: 'arrival', 'aria-live': 'polite' }, h('p', { class: 'muted', role: 'status' }, 'Waiting for a new lead… (checked every 2 seconds while this page is open)'));
  const before = newest.data[0]?.lead_id ?? null;

  root.append(
    h('h1', {}, 'Get started'),
    h('p', {}, 'Three steps to your first lead: a key, a command that posts a sample lead with it, and the lead arriving here.'),
    ...(before ? [notice('You already have leads: the guide waits for the next one.', 'info')] : []),
    h('section', { class: 'card guide-step', id: 'step-key' }, h('h2', {}, '1. Make an API key'), h('p', { class: 'muted' }, 'It authenticates your posts. It is shown once: keep it on your servers. You can make more, and revoke them, under ', link('/settings/api-keys', 'Settings → API keys'), '.'), keyBox, form),
    h(
      'section',
      { class: 'card guide-step', id: 'step-curl' },
      h('h2', {}, '2. Post a sample lead'),
      h('p', {}, `A lead in the ${vertical} vertical, to this server (${origin}/v1/leads). The person is a sample: use your own leads' fields the same way.`),
      step2Note,
      h('pre', { class: 'code', tabindex: '0' }, command),
      h('p', {}, copyButton(() => command.textContent ?? '', 'copy-curl')),
      campaigns.data.length ? h('p', { class: 'muted' }, 'Posting through a campaign instead? Each campaign has its own ', link('/campaigns', 'specification'), ' for your developers.') : null,
    ),
    h('section', { class: 'card guide-step', id: 'step-arrival' }, h('h2', {}, '3. See it arrive'), waiting),
  );
  // Until the page is left (the app draws another page in place of this one).
  watchArrivals(before, (l) => waiting.replaceChildren(arrived(l)), { active: () => waiting.isConnected });
}
