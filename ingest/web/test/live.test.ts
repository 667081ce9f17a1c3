import { describe, expect, it } from 'vitest';
import { LiveEvent, addEvent, parseLiveEvent, partiesText, personText, retryDelay, stateLabel, stateText, throttle } from '../src/live';

const lead = (id: string, extra: Record<string, unknown> = {}) => ({ lead_id: id, status: 'pending', created_at: '2026-11-29T10:00:00Z', first_name: 'Ada', last_name: 'Byron', ...extra });
const received = (id: string): LiveEvent => ({ kind: 'received', lead: lead(id) });
const sold = (id: string, d: Record<string, unknown>, extra: Record<string, unknown> = {}): LiveEvent => ({
  kind: 'decided',
  lead: lead(id, { status: 'delivered', distribution: { delivery_status: 'delivered', currency: 'USD', ...d }, ...extra }),
});

describe('the live feed', () => {
  it('reads only lead events from the stream', () => {
    expect(parseLiveEvent(JSON.stringify(received('ld_1')))?.lead.lead_id).toBe('ld_1');
    expect(parseLiveEvent('{"kind":"other","lead":{"lead_id":"ld_1"}}')).toBeNull();
    expect(parseLiveEvent('{"kind":"decided"}')).toBeNull();
    expect(parseLiveEvent('not json')).toBeNull();
  });

  it('keeps one line a lead, newest first, capped', () => {
    let list: LiveEvent[] = [];
    list = addEvent(list, received('ld_1'));
    list = addEvent(list, received('ld_2'));
    list = addEvent(list, sold('ld_1', { price: 12 }));
    expect(list.map((e) => [e.lead.lead_id, e.kind])).toEqual([
      ['ld_1', 'decided'],
      ['ld_2', 'received'],
    ]);
    for (let i = 0; i < 80; i += 1) list = addEvent(list, received(`ld_x${i}`), 50);
    expect(list).toHaveLength(50);
    expect(list[0].lead.lead_id).toBe('ld_x79');
  });

  it('says the state with the money this reader sees', () => {
    expect(stateText(received('ld_1'), 'operator')).toBe('Received');
    expect(stateText(sold('ld_1', { price: 12, payout: 8.4 }), 'operator')).toBe('Sold, $12.00');
    // A seller's price is its payout: shown as the payout, never a buyer's price.
    expect(stateText(sold('ld_1', { price: 8.4, payout: 8.4 }), 'seller')).toBe('Sold, $8.40 payout');
    expect(stateText(sold('ld_1', { price: 12 }), 'buyer')).toBe('Sold, $12.00');
    expect(stateText({ kind: 'decided', lead: lead('ld_2', { status: 'unsold', distribution: { delivery_status: 'unsold', price: null } }) }, 'seller')).toBe('Unsold');
  });

  it('names the parties as the console does, only from ids it was given', () => {
    const names = new Map([
      ['sel_1', 'Acme Leads'],
      ['buy_1', 'Big Buyer'],
      ['cmp_1', 'Spring campaign'],
    ]);
    const l = sold('ld_1', { buyer_id: 'buy_1', price: 12 }, { seller_id: 'sel_1', campaign_id: 'cmp_1' }).lead;
    expect(partiesText(l, 'operator', names)).toBe('Acme Leads → Big Buyer');
    expect(partiesText(l, 'seller', names)).toBe('Spring campaign');
    expect(partiesText(lead('ld_2', { source_code: 'src_ABC' }), 'buyer', new Map())).toBe('src_ABC');
    expect(partiesText(lead('ld_3', { seller_id: 'sel_9' }), 'operator', names)).toBe('sel_9');
  });

  it('shows the person, else the contact, else the id', () => {
    expect(personText(lead('ld_1'))).toBe('Ada Byron');
    expect(personText({ lead_id: 'ld_2', email: 'a@b.c' })).toBe('a@b.c');
    expect(personText({ lead_id: 'ld_3' })).toBe('ld_3');
  });

  it('waits longer after each failure, up to 30 s, and says so in words', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map(retryDelay)).toEqual([1, 2, 4, 8, 16, 30, 30]);
    expect(stateLabel('live')).toBe('Live: leads appear here as they arrive');
    expect(stateLabel('reconnecting', 4)).toBe('Reconnecting in 4 s…');
    expect(stateLabel('reconnecting')).toBe('Reconnecting…');
    expect(stateLabel('resumed')).toMatch(/^Live from now: .* the leads list has every lead$/);
  });

  it('reads the totals at most every few seconds, and once after a burst', () => {
    let t = 0;
    const pending: (() => void)[] = [];
    let runs = 0;
    const ask = throttle(() => (runs += 1), 3000, () => t, (f) => pending.push(f));
    ask();
    expect(runs).toBe(1);
    t = 100;
    ask();
    ask();
    ask();
    expect(runs).toBe(1);
    expect(pending).toHaveLength(1);  // one run scheduled for the whole burst
    t = 3000;
    pending.shift()!();
    expect(runs).toBe(2);
    t = 7000;
    ask();
    expect(runs).toBe(3);
  });
});
