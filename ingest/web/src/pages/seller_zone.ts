// The operator's form of a seller's time zone, on the campaigns page's Sellers card: the zone its
// payout statements are cut in (PUT /v1/sellers/{id} `time_zone`; a closed period keeps the zone
// it was closed in).
import { put } from '../api';
import { button, field, h, select } from '../dom';
import { FormErrors } from '../form';
import { isStale, staleNotice } from '../versions';
import { browserZone, zoneList } from '../zone';
import { zoneLabel } from './time_zone';

type Rec = Record<string, any>;

/** A form changing `seller`'s time zone; `done` runs after a save or a cancel. */
export function sellerZoneForm(seller: Rec, done: () => void): HTMLFormElement {
  const mine: string = seller.time_zone || 'UTC';
  const now = Date.now();
  const here = browserZone();
  const control = select(zoneList(mine).map((z) => [z, zoneLabel(z, now, here)] as [string, string]), mine);
  const zone = field('time_zone', `Time zone of ${seller.name}`, control, "its payout statements run from this zone's midnight; a closed period stays in the zone it was closed in");
  const errors = new FormErrors([zone]);
  const form = h(
    'form',
    { class: 'seller-zone', novalidate: true, 'aria-label': `Time zone of ${seller.name}` },
    errors.element,
    zone.wrapper,
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save time zone'), ' ', button('Cancel', done, { class: 'secondary' })),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await put(`/v1/sellers/${encodeURIComponent(seller.seller_id)}`, { time_zone: control.value }, seller.version);
      errors.clear();
      done();
    } catch (e) {
      if (!isStale(e)) return errors.show(e);
      errors.clear();
      errors.element.replaceChildren(staleNotice('seller', done));
    }
  });
  return form;
}
