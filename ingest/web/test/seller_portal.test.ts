import { afterEach, describe, expect, it, vi } from 'vitest';
import { sentence, unsoldHint, unsoldWhy } from '../src/unsold';
import { DEFAULT_VERTICAL, KEY_PLACEHOLDER, curlCommand, guideVertical, sampleLead, sampleValue } from '../src/first_run';
import { campaignPayouts, chartAmount, payoutColumns, payoutReport } from '../src/payouts';
import { liveFeed, watchArrivals } from '../src/arrival';
import { distributionPairs } from '../src/lead_view';
import { payoutWords, sellerFacts } from '../src/pages/seller_account';

// Why a seller's lead was not sold: the API's seller words as sentences, never another reason.
describe('unsold reasons in seller words', () => {
  const unsold = (extra: Record<string, unknown> = {}) => ({ lead_id: 'ld_1', status: 'unsold', vertical: 'solar', distribution: { delivery_status: 'unsold', reason: 'no buyer bid on the lead' }, ...extra });

  it('makes the API\'s words a sentence', () => {
    expect(sentence('no buyer bid on the lead')).toBe('No buyer bid on the lead.');
    expect(sentence('Already one.')).toBe('Already one.');
    expect(sentence('  ')).toBe('');
  });

  it('explains an unsold lead with its reason and what kept buyers from it, sorted as given', () => {
    const why = unsoldWhy(unsold({ ineligible_reasons: ["a buyer's cap was reached", "the lead did not match a buyer's filters"], offers: { pings: 0, posts: 0 } }));
    expect(why).toEqual({ headline: 'No buyer bid on the lead.', details: ["A buyer's cap was reached.", "The lead did not match a buyer's filters."] });
  });

  it('says no buyer was buying the vertical when the lead was offered to none and none was ruled out', () => {
    const l = unsold({ distribution: { reason: 'no buyer takes leads like this one now' }, ineligible_reasons: [], offers: { pings: 0, posts: 0 } });
    expect(unsoldWhy(l)!.headline).toBe('No buyer was buying the solar vertical when it arrived.');
    // Offered to a buyer, or a buyer ruled out: the API's words, not that.
    expect(unsoldWhy({ ...l, offers: { pings: 1, posts: 0 } })!.headline).toBe('No buyer takes leads like this one now.');
    expect(unsoldWhy({ ...l, ineligible_reasons: ['outside a buyer\'s hours'] })!.headline).toBe('No buyer takes leads like this one now.');
    // The list row holds no offers: no such guess there.
    expect(unsoldHint(l)).toBe('No buyer takes leads like this one now.');
  });

  it('leaves a seller\'s withheld buyer and its reason out of the distribution card (the reason has its own)', () => {
    const labels = distributionPairs({ status: 'unsold', distribution: { buyer_id: null, reason: 'no buyer bid on the lead', payout: null } }, 'seller').map(([k]) => k);
    expect(labels).not.toContain('Buyer');
    expect(labels).not.toContain('Reason');
    expect(distributionPairs({ distribution: { buyer_id: 'by_1', reason: 'no bids' } }, 'operator').map(([k]) => k)).toEqual(expect.arrayContaining(['Buyer', 'Reason']));
  });

  it('explains refused, failed and duplicate leads, never sold, returned or pending ones', () => {
    expect(unsoldWhy({ status: 'duplicate', distribution: { reason: 'duplicate of an earlier lead' } })!.headline).toBe('Duplicate of an earlier lead.');
    expect(unsoldWhy({ status: 'failed', distribution: {} })!.headline).toBe('No reason given.');
    for (const status of ['delivered', 'returned', 'pending']) {
      expect(unsoldWhy({ status, distribution: { reason: 'x' } })).toBeNull();
      expect(unsoldHint({ status, distribution: { reason: 'x' } })).toBeNull();
    }
    expect(unsoldHint({ status: 'unsold', distribution: {} })).toBeNull();
  });
});

// The first-run guide's sample lead and its curl command.
describe('first-run guide', () => {
  it('posts in the vertical of the seller\'s first campaign, else the default', () => {
    expect(guideVertical([{ name: 'x' }, { vertical: 'solar' }, { vertical: 'mortgage' }])).toBe('solar');
    expect(guideVertical([])).toBe(DEFAULT_VERTICAL);
  });

  it('makes a lead with the standard fields, a unique e-mail and phone, and the vertical\'s required fields', () => {
    const fields = [
      { name: 'credit_score', type: 'integer', required: true, min: 300, max: 850, values: [] },
      { name: 'roof_type', type: 'enum', required: true, values: ['shingle', 'tile'] },
      { name: 'notes', type: 'string', required: true, min: 10, max: 20 },
      { name: 'optional_one', type: 'string', required: false },
    ];
    const a = sampleLead('solar', fields, '123456');
    expect(a).toEqual({
      first_name: 'Ada',
      last_name: 'Sample',
      email: 'ada.sample.123456@example.com',
      phone: '2025551234',
      zip_code: '20001',
      vertical: 'solar',
      source: 'first-run-guide',
      custom_fields: { credit_score: 575, roof_type: 'shingle', notes: 'examplexxx' },
    });
    expect(sampleLead('solar', fields, '987654').email).not.toBe(a.email);
    expect(sampleLead('auto_insurance', [], '1').custom_fields).toBeUndefined();
    expect(sampleLead('auto_insurance', [], '1').phone).toBe('2025551000');
  });

  it('fills a field from its type and bounds', () => {
    expect(sampleValue({ type: 'number', min: 1, max: 2 })).toBe(1.5);
    expect(sampleValue({ type: 'boolean' })).toBe(true);
    expect(sampleValue({ type: 'string', max: 3 })).toBe('exa');
  });

  it('writes a curl command to this server with the key, the JSON body shell-quoted', () => {
    const cmd = curlCommand('https://leads.example', 'lfk_abc', { first_name: "O'Brien", vertical: 'solar' });
    expect(cmd).toBe(
      "curl -X POST https://leads.example/v1/leads \\\n  -H 'Authorization: Bearer lfk_abc' \\\n  -H 'Content-Type: application/json' \\\n  -d '{\n  \"first_name\": \"O'\\''Brien\",\n  \"vertical\": \"solar\"\n}'",
    );
    expect(curlCommand('https://x', KEY_PLACEHOLDER, {})).toContain(`Bearer ${KEY_PLACEHOLDER}`);
  });
});

// The payouts page: a seller's figures only, per day and per campaign, and the CSV names.
describe('payouts', () => {
  it('shows a seller\'s revenue figures, the net payout last, never revenue or margin', () => {
    const cols = payoutColumns();
    expect(cols[cols.length - 1]).toBe('payout');
    expect(cols).toContain('leads_sold');
    for (const never of ['revenue', 'margin', 'avg_price', 'gross_revenue', 'returned_revenue']) expect(cols).not.toContain(never);
  });

  it('asks the revenue report per day and per campaign in the user\'s zone, the CSV named after report and range', () => {
    const r = { from: '2026-11-01', to: '2026-11-07' };
    expect(payoutReport(r, 'America/New_York', 'day')).toEqual({
      path: '/v1/reports/revenue?from=2026-11-01&to=2026-11-07&group_by=day&tz=America%2FNew_York',
      csv: '/v1/reports/revenue?from=2026-11-01&to=2026-11-07&group_by=day&tz=America%2FNew_York&format=csv',
      file: 'revenue_2026-11-01_2026-11-07.csv',
    });
    expect(payoutReport(r, 'UTC', 'campaign').path).toContain('group_by=campaign');
  });

  it('writes the chart\'s amounts short', () => {
    expect([0, 2.5, 15, 0.25, 1500, 12000].map(chartAmount)).toEqual(['0', '2.5', '15', '0.25', '1.5k', '12k']);
  });

  it('names each campaign it may, largest payout first, the API key\'s leads without a campaign', () => {
    const rows = campaignPayouts(
      [
        { campaign_id: 'cm_a', payout: 10, leads_sold: 1 },
        { campaign_id: null, payout: 30, leads_sold: 2 },
        { campaign_id: 'cm_b', payout: 20, leads_sold: 2 },
      ],
      new Map([['cm_b', 'Web form']]),
    );
    expect(rows.map((r) => [r.id, r.name])).toEqual([['', null], ['cm_b', 'Web form'], ['cm_a', null]]);
  });
});

// Waiting for the lead: from the live feed, or every 2 s while the page is open; each new or
// changed lead once.
describe('arrival', () => {
  afterEach(() => vi.useRealTimers());

  it('hands over a lead newer than the one there at first, again when decided, and stops with the page', async () => {
    vi.useFakeTimers();
    let open = true;
    let newest: Record<string, any> | null = { lead_id: 'ld_01OLD', status: 'delivered' };
    let asks = 0;
    const seen: string[] = [];
    watchArrivals('ld_01OLD', (l) => seen.push(`${l.lead_id}:${l.status}`), { active: () => open, newest: async () => (asks++, newest) });
    await vi.advanceTimersByTimeAsync(1999);
    expect(asks).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(asks).toBe(1);
    expect(seen).toEqual([]);
    newest = { lead_id: 'ld_01PNEW', status: 'pending', distribution: { payout: null } };
    await vi.advanceTimersByTimeAsync(4000);
    expect(seen).toEqual(['ld_01PNEW:pending']);
    newest = { lead_id: 'ld_01PNEW', status: 'delivered', distribution: { payout: 12.5 } };
    await vi.advanceTimersByTimeAsync(2000);
    expect(seen).toEqual(['ld_01PNEW:pending', 'ld_01PNEW:delivered']);
    open = false;
    const before = asks;
    await vi.advanceTimersByTimeAsync(10000);
    expect(asks).toBe(before);
  });

  it('asks again after a failed ask, and stop() ends it', async () => {
    vi.useFakeTimers();
    let asks = 0;
    const seen: string[] = [];
    const stop = watchArrivals(null, (l) => seen.push(l.lead_id), {
      active: () => true,
      newest: async () => {
        asks++;
        if (asks === 1) throw new TypeError('Failed to fetch');
        return { lead_id: 'ld_1', status: 'unsold' };
      },
    });
    await vi.advanceTimersByTimeAsync(4000);
    expect(seen).toEqual(['ld_1']);
    stop();
    await vi.advanceTimersByTimeAsync(10000);
    expect(asks).toBe(2);
  });

  it('listens to the feed instead of asking, asks once as it connects, and asks every 2 s once it is refused', async () => {
    vi.useFakeTimers();
    let open = true;
    let asks = 0;
    let closed = 0;
    const seen: string[] = [];
    let push: (l: Record<string, any>) => void = () => {};
    let connected: () => void = () => {};
    let down: () => void = () => {};
    watchArrivals('ld_01B', (l) => seen.push(`${l.lead_id}:${l.status}`), {
      active: () => open,
      newest: async () => (asks++, { lead_id: 'ld_01C', status: 'pending' }),
      listen: (onLead, onOpen, onDown) => {
        push = onLead;
        connected = onOpen;
        down = onDown;
        return () => closed++;
      },
    });
    connected();
    await vi.advanceTimersByTimeAsync(0);
    expect(asks).toBe(1);
    expect(seen).toEqual(['ld_01C:pending']);
    push({ lead_id: 'ld_01A', status: 'delivered' });  // older than the page: not the one awaited
    push({ lead_id: 'ld_01C', status: 'pending' });  // the same again: once
    push({ lead_id: 'ld_01C', status: 'delivered', distribution: { payout: 9 } });
    await vi.advanceTimersByTimeAsync(10000);
    expect(asks).toBe(1);  // listening: no asking
    expect(seen).toEqual(['ld_01C:pending', 'ld_01C:delivered']);
    down();
    await vi.advanceTimersByTimeAsync(2000);
    expect(asks).toBe(2);
    open = false;
    await vi.advanceTimersByTimeAsync(2000);
    expect(closed).toBe(1);
    expect(asks).toBe(2);
  });
});

// A seller's own account (Settings → Account): what GET /v1/account answers it, in words.
describe("a seller's own account", () => {
  it('reads its payout rule, zone and campaigns', () => {
    expect(payoutWords({ model: 'revshare', value: 70 })).toBe('70% revshare');
    expect(payoutWords({ model: 'fixed', value: 12.5 })).toBe('$12.50 fixed');
    expect(payoutWords(undefined)).toBe('—');
    const facts = new Map(sellerFacts({ seller_id: 'sl_1', name: 'Leads Inc', status: 'active', payout: { model: 'revshare', value: 70 }, test_mode: false, time_zone: 'America/New_York', campaigns: { count: 3, active: 2 } }).map((f) => [f.label, f.text]));
    expect(facts.get('Payout')).toBe('70% revshare');
    expect(facts.get('Statements cut in')).toBe('America/New_York');
    expect(facts.get('Campaigns')).toBe('3 (2 active)');
    expect(facts.get('Since')).toBe('—');
    expect(facts.get('Test mode')).toBe('off');
  });
});

// The live feed as the first-run guide listens to it, over a stand-in EventSource.
describe('the guide’s live feed', () => {
  class StandIn {
    static CONNECTING = 0;
    static OPEN = 1;
    static CLOSED = 2;
    static last: StandIn;
    readyState = StandIn.CONNECTING;
    listeners = new Map<string, ((m: { data?: string }) => void)[]>();
    constructor(readonly url: string) {
      StandIn.last = this;
    }
    addEventListener(type: string, f: (m: { data?: string }) => void) {
      this.listeners.set(type, [...(this.listeners.get(type) ?? []), f]);
    }
    emit(type: string, data?: string) {
      for (const f of this.listeners.get(type) ?? []) f({ data });
    }
    close() {
      this.readyState = StandIn.CLOSED;
    }
  }
  afterEach(() => vi.unstubAllGlobals());

  it('hands on leads, asks again at each connection and at a reset, and is down once refused', () => {
    vi.stubGlobal('EventSource', StandIn);
    const leads: string[] = [];
    let opens = 0;
    let downs = 0;
    const close = liveFeed((l) => leads.push(l.lead_id), () => opens++, () => downs++);
    const es = StandIn.last;
    expect(es.url).toBe('/v1/live');
    es.emit('open');
    es.emit('lead', JSON.stringify({ kind: 'received', lead: { lead_id: 'ld_1', status: 'pending' } }));
    // Resumed from now: what changed while away was not sent, so the page asks as at a connection.
    es.emit('reset', JSON.stringify({ reason: 'too_far_behind' }));
    expect(opens).toBe(2);
    expect(leads).toEqual(['ld_1']);
    es.emit('error');  // still connecting: the browser retries, not down
    expect(downs).toBe(0);
    es.readyState = StandIn.CLOSED;
    es.emit('error');
    expect(downs).toBe(1);
    close();
  });
});
