import { afterEach, describe, expect, it, vi } from 'vitest';
import { Delivery, endpointBody, lastResult, switchEndpoint, switchState } from '../src/pages/postbacks';
import { isStale } from '../src/versions';

// The body of a new endpoint: a seller's names no seller (its own is taken), the operator's does.
describe('postback endpoint body', () => {
  it('sends the ticked events, the campaign when one is chosen, and the seller for the operator', () => {
    expect(endpointBody({ url: ' https://a.example/pb ', campaign_id: '' }, ['lead.sold'], false)).toEqual({ url: 'https://a.example/pb', events: ['lead.sold'] });
    expect(endpointBody({ url: 'https://a.example/pb', campaign_id: 'cp_1' }, ['lead.sold', 'lead.returned'], false)).toEqual({ url: 'https://a.example/pb', events: ['lead.sold', 'lead.returned'], campaign_id: 'cp_1' });
    expect(endpointBody({ url: 'https://a.example/pb', seller_id: ' sl_9 ' }, [], true)).toEqual({ url: 'https://a.example/pb', events: [], seller_id: 'sl_9' });
  });
});

// The delivery log's last attempt, in a few words.
describe('postback delivery log', () => {
  const row = (d: Partial<Delivery>): Delivery => ({ event_id: 'evt_1', type: 'lead.sold', lead_id: 'ld_1', occurred_at: '', state: 'pending', attempts: 1, last_status: null, last_error: null, next_attempt_at: null, delivered_at: null, ...d });
  it('says the status, else the error, else that it was not tried', () => {
    expect(lastResult(row({ attempts: 0 }))).toBe('not tried yet');
    expect(lastResult(row({ last_status: 503 }))).toBe('HTTP 503');
    expect(lastResult(row({ last_error: 'timed out' }))).toBe('timed out');
    expect(lastResult(row({}))).toBe('no answer');
  });
});

// Switched off: since when, and what happens to its events.
describe('postback endpoint switch', () => {
  it('says on, or off since when with what waits and what is not sent', () => {
    expect(switchState({ active: true, switched_off_at: null })).toBe('on');
    const off = switchState({ active: false, switched_off_at: '2026-03-01T10:05:00.000Z' }, 'UTC');
    expect(off).toMatch(/^off since .*2026.*: the events of its time on wait until it is on again; those of its time off are not sent to it$/);
    expect(switchState({ active: false })).toMatch(/^off: /);
  });
});

// Switching an endpoint sends the version the page read as If-Match; a 412 is a stale error,
// shown as such, and nothing is sent again.
describe('postback endpoint switch, versioned', () => {
  afterEach(() => vi.unstubAllGlobals());
  it('sends the opposite of what was read at its version, and a 412 is stale', async () => {
    const sent: { method: string; path: string; headers: Record<string, string>; body: string }[] = [];
    const statuses = [200, 412];
    vi.stubGlobal('fetch', async (path: string, init: { method: string; headers: Record<string, string>; body: string }) => {
      sent.push({ method: init.method, path, headers: init.headers, body: init.body });
      const status = statuses.shift() ?? 500;
      return { ok: status < 300, status, text: async () => JSON.stringify(status < 300 ? { success: true, data: {} } : { title: 'Precondition Failed', status, detail: 'someone else changed this postback endpoint since you read it' }) };
    });
    await switchEndpoint({ id: 'pbe_1', active: true, version: 3 });
    expect(sent[0].method).toBe('PATCH');
    expect(sent[0].path).toBe('/v1/postback-endpoints/pbe_1');
    expect(sent[0].headers['If-Match']).toBe('"v3"');
    expect(JSON.parse(sent[0].body)).toEqual({ active: false });
    let caught: unknown = null;
    await switchEndpoint({ id: 'pbe_1', active: false, version: 3 }).catch((e) => (caught = e));
    expect(isStale(caught)).toBe(true);
    expect(sent.length).toBe(2);
  });
});
