import { describe, expect, it } from 'vitest';
import { Delivery, endpointBody, lastResult } from '../src/pages/postbacks';

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
