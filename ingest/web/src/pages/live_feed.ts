// The overview's live feed: leads arriving and being decided, newest first, from GET /v1/live
// (Server-Sent Events; the session cookie authenticates it). The logic is src/live.ts.
import { Ctx } from '../app';
import { clear, h, link } from '../dom';
import { dateTime } from '../format';
import { LiveEvent, LiveState, addEvent, parseLiveEvent, partiesText, personText, retryDelay, stateLabel, stateText } from '../live';
import { Names, loadNames } from '../names';

const CAP = 50;
// The list outlives a page drawn again (a phone turned, the range changed): the same user finds
// the leads it already saw. Another user starts empty.
let kept: { user: string; events: LiveEvent[] } = { user: '', events: [] };
// The one stream open: a page drawn again, or another page, closes it. A browser holds six
// connections to a server, and a stream left open would hold one for good.
let stopActive: (() => void) | null = null;
// The names of the ids lines show, read once per user at its first event (not with every page:
// a seller's session has its plan's rate, and the overview is drawn often).
let named: { user: string; names: Names | null } = { user: '', names: null };

/** The feed's section; `changed` is called on each event and on each reconnection, so the
 *  page can read its totals again. The stream closes once the section left the page. */
export function liveFeed(ctx: Ctx, changed: () => void): HTMLElement {
  const account = ctx.user.account;
  const status = h('p', { class: 'live-state', role: 'status', id: 'live-state' });
  const list = h('ol', { class: 'live-list', id: 'live-list', 'aria-label': 'Latest leads, newest first', tabindex: 0 });
  const empty = h('p', { class: 'muted', id: 'live-empty' }, account === 'buyer' ? 'None yet: a lead you buy shows here once it is sold to you.' : 'None yet: each lead shows here when it arrives, then with its outcome.');
  const section = h('section', { class: 'card live', 'aria-labelledby': 'live-heading' }, h('h2', { id: 'live-heading' }, 'Live feed'), status, empty, list);
  let events: LiveEvent[] = kept.user === ctx.user.id ? kept.events : [];
  let source: EventSource | null = null;
  let failures = 0;
  let opened = false;
  if (named.user !== ctx.user.id) named = { user: ctx.user.id, names: null };
  const names = () => named.names ?? new Map<string, string>();
  const nameThem = () => {
    if (named.names) return;
    named.names = new Map();  // asked once
    void loadNames(account).then((n) => {
      if (named.user !== ctx.user.id) return;
      named.names = n;
      if (!gone()) draw();
    });
  };
  let timer: ReturnType<typeof setTimeout> | undefined;

  const show = (s: LiveState, retryIn = 0) => {
    status.textContent = stateLabel(s, retryIn);
    status.dataset.state = s;
  };
  const stop = () => {
    source?.close();
    clearTimeout(timer);
    clearInterval(watch);
  };
  // Checked on each event and every 2 s: a section no longer on the page closes its stream.
  const gone = () => {
    if (section.isConnected) return false;
    stop();
    return true;
  };
  stopActive?.();
  stopActive = stop;
  const watch = setInterval(gone, 2000);
  const draw = () => {
    clear(list);
    empty.hidden = events.length > 0;
    for (const ev of events) {
      const l = ev.lead;
      const parties = partiesText(l, account, names());
      const at = ev.kind === 'decided' ? l.distribution?.decided_at ?? l.created_at : l.created_at;
      list.append(
        h(
          'li',
          { class: `live-item live-${ev.kind}`, 'data-lead': l.lead_id },
          h('span', { class: 'live-time' }, dateTime(at)),
          ' ',
          link(`/leads/${encodeURIComponent(l.lead_id)}`, personText(l), { title: l.lead_id }),
          ' ',
          h('span', { class: 'live-status' }, stateText(ev, account)),
          parties ? h('span', { class: 'live-parties' }, ` · ${parties}`) : null,
        ),
      );
    }
  };
  const connect = () => {
    if (gone()) return;
    show(failures === 0 ? 'connecting' : 'reconnecting');
    const es = new EventSource('/v1/live');
    source = es;
    es.addEventListener('open', () => {
      failures = 0;
      show('live');
      if (opened) changed();  // a reconnection: what happened while away shows in the totals
      opened = true;
    });
    es.addEventListener('lead', (m) => {
      if (gone()) return;
      const ev = parseLiveEvent((m as MessageEvent).data);
      if (!ev) return;
      events = addEvent(events, ev, CAP);
      kept = { user: ctx.user.id, events };
      nameThem();
      draw();
      changed();
    });
    // The feed resumed from now, not from where this page left it: the lines kept may be stale
    // and some leads missing, so the list starts again and the totals are read again.
    es.addEventListener('reset', () => {
      if (gone()) return;
      events = [];
      kept = { user: ctx.user.id, events };
      draw();
      show('resumed');
      changed();
    });
    es.addEventListener('error', () => {
      if (gone()) return;
      if (es.readyState === EventSource.CONNECTING) return show('reconnecting');  // the browser retries
      // Refused (a full server's 503, a session that ended): the browser gives up; so do we, for a while.
      es.close();
      failures += 1;
      const wait = retryDelay(failures);
      show('reconnecting', wait);
      timer = setTimeout(connect, wait * 1000);
    });
  };
  if (events.length) nameThem();
  draw();
  // After the section is on the page, so that gone() does not close it at once.
  setTimeout(connect, 0);
  return section;
}
