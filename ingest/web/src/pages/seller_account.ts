// Settings → Account (a seller): what the seller reads of its own account (GET /v1/account):
// its name, status, payout rule, test mode, the time zone its payout statements are cut in, and
// how many campaigns it has. The operator changes them; the seller reads them.
import { get } from '../api';
import { Ctx } from '../app';
import { h, link } from '../dom';
import { dateTime } from '../format';

type Rec = Record<string, any>;

/** A payout rule as words: "70% revshare", "$12.50 fixed". */
export function payoutWords(p: Rec | undefined): string {
  if (!p) return '—';
  return p.model === 'revshare' ? `${p.value}% revshare` : `$${Number(p.value).toFixed(2)} fixed`;
}

/** One line of the account: its label, its words, and how the page marks them. */
export interface Fact {
  label: string;
  text: string;
  id?: string;
  cls?: string;
}

/** The account's facts, in the order the page shows them. */
export function sellerFacts(a: Rec): Fact[] {
  const campaigns = a.campaigns ?? {};
  return [
    { label: 'Name', text: a.name ?? '—' },
    { label: 'Seller id', text: a.seller_id, cls: 'mono' },
    { label: 'Status', text: a.status, cls: `badge badge-${a.status}` },
    { label: 'Payout', text: payoutWords(a.payout) },
    { label: 'Test mode', text: a.test_mode ? 'on: every lead you post is a test lead' : 'off' },
    { label: 'Statements cut in', text: a.time_zone ?? 'UTC', id: 'account-zone' },
    { label: 'Campaigns', text: `${campaigns.count ?? 0} (${campaigns.active ?? 0} active)`, id: 'account-campaigns' },
    { label: 'Since', text: a.created_at ? dateTime(a.created_at) : '—' },
  ];
}

export async function sellerAccountPage(_ctx: Ctx, root: HTMLElement): Promise<void> {
  const a = (await get<{ data: Rec }>('/v1/account')).data;
  root.append(
    h('h1', {}, 'Account'),
    h(
      'section',
      { class: 'card narrow', 'aria-label': 'Your account' },
      h('dl', { class: 'props' }, sellerFacts(a).flatMap((f) => [h('dt', {}, f.label), h('dd', {}, h('span', { id: f.id, class: f.cls }, f.text))])),
      h(
        'p',
        { class: 'muted small' },
        'Your ',
        link('/statements', 'payout statements'),
        ` run from midnight in ${a.time_zone ?? 'UTC'}; a closed period stays in the zone it was closed in. The operator sets these; ask the operator to change them. The zone pages show times in is `,
        link('/settings/time-zone', 'yours to choose'),
        '.',
      ),
    ),
  );
}
