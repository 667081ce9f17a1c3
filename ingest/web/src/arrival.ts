// Waiting for a seller's lead to arrive (the first-run guide): asks for the newest lead every
// 2 s while the page that started it is open, and hands each newer or changed lead to the page.
// One function behind which a server push can replace the polling later without the page
// changing.
import { get } from './api';

type Lead = Record<string, any>;

export interface ArrivalOptions {
  /** Whether the page is still open; polling stops for good once it says no. */
  active: () => boolean;
  /** Milliseconds between two asks (2 s). */
  intervalMs?: number;
  /** The newest lead, or null when there is none (GET /v1/leads?limit=1 by default). */
  newest?: () => Promise<Lead | null>;
}

/** The newest of the signed-in account's leads, or null. */
export async function newestLead(): Promise<Lead | null> {
  const page = await get<{ data: Lead[] }>('/v1/leads?limit=1');
  return page.data[0] ?? null;
}

/** Calls `onLead` with the newest lead each time it is not `beforeId` (the newest when the page
 *  opened, null for none) and differs from what was last handed over (a new lead, or the same
 *  lead decided since: its status or payout changed). A failed ask is tried again at the next
 *  tick. Answers a function that stops the watch. */
export function watchArrivals(beforeId: string | null, onLead: (lead: Lead) => void, opts: ArrivalOptions): () => void {
  const newest = opts.newest ?? newestLead;
  const every = opts.intervalMs ?? 2000;
  let stopped = false;
  let last = '';
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    stopped = true;
    if (timer !== undefined) clearTimeout(timer);
  };
  const tick = async () => {
    if (stopped || !opts.active()) return stop();
    try {
      const lead = await newest();
      if (lead && lead.lead_id !== beforeId && !stopped && opts.active()) {
        const seen = JSON.stringify([lead.lead_id, lead.status, lead.distribution?.payout ?? null]);
        if (seen !== last) {
          last = seen;
          onLead(lead);
        }
      }
    } catch {
      // The next tick asks again.
    }
    if (!stopped && opts.active()) timer = setTimeout(tick, every);
    else stop();
  };
  timer = setTimeout(tick, every);
  return stop;
}
