// The operator's switch of each seller's test mode, on the campaigns page: sellers have no page
// of their own (they are made with leadflow-admin or POST /v1/sellers).
import { put } from '../api';
import { button, h, notice, table } from '../dom';
import { testBadge } from '../test_mode';
import { isStale, staleNotice } from '../versions';

type Rec = Record<string, any>;

/** A card listing `sellers` with a button that turns each one's test mode on or off. */
export function sellersTestMode(sellers: Rec[], changed: () => void): HTMLElement {
  const message = h('div');
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
  ]);
  return h(
    'section',
    { class: 'card' },
    h('h2', {}, 'Sellers in test mode'),
    h('p', { class: 'muted' }, 'A seller in test mode has every lead stored as a test: validated and shown, never offered to a buyer, never paid.'),
    message,
    table(['Seller', 'Test mode', ''], rows, `${sellers.length} sellers`),
  );
}
