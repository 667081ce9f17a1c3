// Settings → Time zone: the zone every page and report shows times and whole days in.
import { User, put } from '../api';
import { Ctx } from '../app';
import { button, field, h, notice, select } from '../dom';
import { FormErrors } from '../form';
import { browserZone, dateTimeIn, offsetAt, offsetText, setZone, zoneList } from '../zone';

/** How a zone reads in the list: its name and its offset now. */
export function zoneLabel(tz: string, now: number, browser: string): string {
  return `${tz} (${offsetText(offsetAt(now, tz))})${tz === browser ? ' — this browser' : ''}`;
}

export function timeZonePage(ctx: Ctx, root: HTMLElement): void {
  const now = Date.now();
  const here = browserZone();
  const mine = ctx.user.time_zone || 'UTC';
  const control = select(
    zoneList(mine).map((z) => [z, zoneLabel(z, now, here)] as [string, string]),
    mine,
  );
  const zoneField = field('time_zone', 'Time zone', control, 'times on every page and report, and the days of every range, are in this zone');
  const errors = new FormErrors([zoneField]);
  const done = h('div', { role: 'status' });
  const current = h('p', { id: 'zone-now' });
  const showCurrent = (tz: string) => current.replaceChildren(`Now ${tz}: ${dateTimeIn(new Date().toISOString(), tz)} (${offsetText(offsetAt(Date.now(), tz))}).`);
  showCurrent(mine);
  const suggest =
    here !== mine
      ? h('p', {}, button(`Use this browser's zone (${here})`, () => {
          control.value = here;
          control.focus();
        }, { type: 'button', class: 'secondary', id: 'use-browser-zone' }))
      : null;
  const form = h('form', { class: 'card narrow', novalidate: true }, errors.element, zoneField.wrapper, suggest, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save time zone')), done);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    done.replaceChildren();
    try {
      const r = await put<{ time_zone: string }>('/v1/session/time-zone', { time_zone: control.value });
      errors.clear();
      (ctx.user as User).time_zone = r.time_zone;
      setZone(r.time_zone);
      showCurrent(r.time_zone);
      done.replaceChildren(notice(`Saved: times are shown in ${r.time_zone}.`, 'ok'));
    } catch (e) {
      errors.show(e);
    }
  });
  root.append(h('h1', {}, 'Time zone'), current, form);
}
