// Waiting for a seller's lead to arrive (the first-run guide): listens to the live feed (GET
// /v1/live) while the page that started it is open and hands each newer or changed lead to the
// page; where the feed cannot be had (refused, or a browser without EventSource) it asks for the
// newest lead every 2 s instead.
import { get } from './api';
import { parseLiveEvent } from './live';

type Lead = Record<string, any>;

/** Opens a push of the account's leads: `onLead` for each lead pushed, `onOpen` each time it
 *  (re)connects, `onDown` once when it will push no more. Answers a function that closes it. */
export type Listen = (onLead: (lead: Lead) => void, onOpen: () => void, onDown: () => void) => () => void;

export interface ArrivalOptions {
  /** Whether the page is still open; the watch stops for good once it says no. */
  active: () => boolean;
  /** Milliseconds between two asks, or two looks at `active` while listening (2 s). */
  intervalMs?: number;
  /** The newest lead, or null when there is none (GET /v1/leads?limit=1 by default). */
  newest?: () => Promise<Lead | null>;
  /** The push to listen to (the live feed by default); null: ask every `intervalMs` only. */
  listen?: Listen | null;
}

/** The newest of the signed-in account's leads, or null. */
export async function newestLead(): Promise<Lead | null> {
  const page = await get<{ data: Lead[] }>('/v1/leads?limit=1');
  return page.data[0] ?? null;
}

/** The live feed as a Listen: a refusal (a full server's 503, a session that ended) is down; a
 *  dropped connection the browser retries by itself is not; a `reset` (the feed resumed from
 *  now) is as a new connection. */
export const liveFeed: Listen = (onLead, onOpen, onDown) => {
  if (typeof EventSource === 'undefined') {
    onDown();
    return () => {};
  }
  const es = new EventSource('/v1/live');
  es.addEventListener('open', onOpen);
  // Resumed from now (what changed while away was not sent): as at a connection, the page asks.
  es.addEventListener('reset', onOpen);
  es.addEventListener('lead', (m) => {
    const ev = parseLiveEvent((m as MessageEvent).data);
    if (ev) onLead(ev.lead);
  });
  es.addEventListener('error', () => {
    if (es.readyState !== EventSource.CLOSED) return;
    es.close();
    onDown();
  });
  return () => es.close();
};

/** Calls `onLead` with each lead newer than `beforeId` (the newest when the page opened, null
 *  for none; lead ids grow with time) each time it differs from what was last handed over (a
 *  new lead, or the same lead decided since: its status or payout changed). Listening, it also
 *  asks for the newest lead once each time the feed connects (what arrived before it did); asking,
 *  a failed ask is tried again at the next tick. Answers a function that stops the watch. */
export function watchArrivals(beforeId: string | null, onLead: (lead: Lead) => void, opts: ArrivalOptions): () => void {
  const newest = opts.newest ?? newestLead;
  const every = opts.intervalMs ?? 2000;
  const listen = opts.listen === undefined ? liveFeed : opts.listen;
  let stopped = false;
  let last = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  let close: (() => void) | undefined;
  const open = () => !stopped && opts.active();
  const stop = () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
    close?.();
  };
  const offer = (lead: Lead | null) => {
    if (!lead || !open() || typeof lead.lead_id !== 'string') return;
    if (beforeId !== null && lead.lead_id <= beforeId) return;
    const seen = JSON.stringify([lead.lead_id, lead.status, lead.distribution?.payout ?? null]);
    if (seen === last) return;
    last = seen;
    onLead(lead);
  };
  const ask = async () => {
    try {
      offer(await newest());
    } catch {
      // Asked again at the next tick (polling) or the next connection (listening).
    }
  };
  let polling = false;
  const tick = async () => {
    if (!open()) return stop();
    if (polling) await ask();
    if (open()) timer = setTimeout(tick, every);
    else stop();
  };
  if (listen) {
    close = listen(offer, () => void ask(), () => {
      polling = true;
    });
  } else {
    polling = true;
  }
  timer = setTimeout(tick, every);
  return stop;
}
