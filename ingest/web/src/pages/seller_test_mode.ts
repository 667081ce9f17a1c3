// The operator's switch of each seller's test mode, and its time zone, on the campaigns page:
import { counted } from '../format';
// sellers have no page of their own (they are made with leadflow-admin or POST /v1/sellers).
import { put } from '../api';
import { button, h, notice, table } from '../dom';
import { testBadge } from '../test_mode';
import { isStale, staleNotice } from '../versions';
import { sellerZoneForm } from './seller_zone';

type Rec = Record<string, any>;

/** A card listing `sellers` with a button that turns each one's test mode on or off, and one
 *  that opens the form of its time zone. */
export function sellersTestMode(sellers: Rec[], changed: () => void): HTMLElement {
  const message = h('div');
  const editing = h('div');
  const rows = sellers.map((s) => [
    h('span', {}, s.name, h('br'), h('span', { class: 'mono muted' }, s.seller_id)),
    testBadge(s.test_mode, 'mode') ?? 'off: real leads',
    button(
      s.test_mode ? 'Turn test mode off' : 'Turn test mode on',
      async () => {
        try {
          await put(`/v1/sellers/${encodeURIComponent(s.seller_id)}`, { test_mode: !s.test_mode }, s.version);
          changed();
        } catch (e) {
          message.replaceChildren(isStale(e) ? staleNotice('seller', changed) : notice(String((e as Error).message), 'error'));
        }
      },
      { class: 'secondary small', 'aria-label': `${s.test_mode ? 'Turn test mode off for' : 'Turn test mode on for'} ${s.name}` },
    ),
    h('span', { class: 'mono' }, s.time_zone ?? 'UTC'),
    button(
      'Change time zone',
      () => {
        editing.replaceChildren(sellerZoneForm(s, changed));
        (editing.querySelector('select') as HTMLElement | null)?.focus();
      },
      { class: 'secondary small', 'aria-label': `Change time zone of ${s.name}` },
    ),
  ]);
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Sellers'),
    h('p', { class: 'muted' }, 'A seller in test mode has every lead stored as a test: validated and shown, never offered to a buyer, never paid. A seller\'s payout statements are cut in its time zone.'),
    message,
    table(['Seller', 'Test mode', '', 'Time zone', ''], rows, counted(sellers.length, 'seller')),
    editing,
  );
}
