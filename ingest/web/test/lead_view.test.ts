import { describe, expect, it } from 'vitest';
import { attemptsTable, distributionPairs, leadCells, leadColumns, offerPairs, personPairs, returnsTable, searchPath } from '../src/lead_view';

// Leads as the API projects them for each reader (docs/visibility.md).
const sellersLead = {
  lead_id: 'ld_1', status: 'returned', created_at: '2026-11-27T10:00:00.000Z', vertical: 'solar', source: 'fb',
  seller_id: 'sl_1', campaign_id: 'cp_1', first_name: 'Ada', email: 'ada@example.com',
  distribution: { accepted: false, delivery_status: 'returned', currency: 'USD', payout: 42, price: 42, decided_at: '2026-11-27T10:00:01.000Z' },
  offers: { pings: 3, posts: 1, first_offered_at: '2026-11-27T10:00:00.100Z', last_offered_at: '2026-11-27T10:00:00.400Z' },
  ineligible_reasons: ['outside a buyer\'s hours'],
  returns: [{ lead_id: 'ld_1', reason: 'invalid_phone', payout: 42, currency: 'USD', returned_at: '2026-11-28T10:00:00.000Z', sold_at: '2026-11-27T10:00:01.000Z' }],
};
const buyersLead = {
  lead_id: 'ld_2', status: 'delivered', created_at: '2026-11-27T10:00:00.000Z', vertical: 'solar', source: null,
  source_code: 'src_abcdefghijkl', first_name: 'Bo', email: 'bo@example.com',
  distribution: { accepted: true, delivery_status: 'delivered', currency: 'USD', buyer_id: 'by_1', price: 60, buyer_lead_id: 'ext-9' },
  attempts: [{ buyer_id: 'by_1', kind: 'post', started_at: '2026-11-27T10:00:00.200Z', duration_ms: 40, outcome: 'accepted', bid: null, http_status: 200, reason: null, tier: 1 }],
};

describe('a seller\'s lead', () => {
  it('lists its payout and campaign, no buyer column', () => {
    expect(leadColumns('seller')).not.toContain('Buyer');
    const cells = leadCells(sellersLead, 'seller');
    expect(cells).toContain('$42.00');
    expect(cells).toContain('cp_1');
    expect(cells.length).toBe(leadColumns('seller').length);
  });
  it('shows its payout once, and no buyer line without a buyer field', () => {
    const pairs = distributionPairs(sellersLead, 'seller');
    const labels = pairs.map(([k]) => k);
    expect(pairs).toContainEqual(['Your payout', '$42.00']);
    expect(labels).not.toContain('Buyer');
    expect(labels).not.toContain('Price');
    expect(attemptsTable(sellersLead)).toBeNull();
    expect(offerPairs(sellersLead)).toContainEqual(['Pings', '3']);
    expect(offerPairs(sellersLead)!.map(([k]) => k)).not.toContain('Offered again');
    expect(offerPairs({ ...sellersLead, offers: { ...sellersLead.offers, reoffers: 1 } })).toContainEqual(['Offered again', '1']);
    const returns = returnsTable(sellersLead, 'seller')!;
    expect(returns.head).toEqual(['Returned', 'Reason', 'Payout reversed']);
    expect(returns.rows[0]).toContain('$42.00');
  });
});

describe('a buyer\'s lead', () => {
  it('lists its price and the seller\'s source code', () => {
    expect(leadColumns('buyer')).not.toContain('Seller');
    const cells = leadCells(buyersLead, 'buyer');
    expect(cells).toContain('src_abcdefghijkl');
    expect(cells).toContain('$60.00');
    expect(cells.length).toBe(leadColumns('buyer').length);
  });
  it('shows the source code and its price, no payout', () => {
    const pairs = distributionPairs(buyersLead, 'buyer');
    expect(pairs).toContainEqual(['Seller source', 'src_abcdefghijkl']);
    expect(pairs).toContainEqual(['Your price', '$60.00']);
    expect(pairs.map(([k]) => k)).not.toContain('Seller payout');
    expect(attemptsTable(buyersLead)!.rows.length).toBe(1);
    expect(offerPairs(buyersLead)).toBeNull();
    // Its aged purchase reads as the re-offer it came from.
    const aged = { ...buyersLead, attempts: [{ ...buyersLead.attempts[0], reoffer: 2 }] };
    expect(attemptsTable(aged)!.rows[0][1]).toBe('Re-offer 2');
    expect(attemptsTable(buyersLead)!.rows[0][1]).toBe('Live');
  });
  it('shows a seller\'s name where the operator allows it', () => {
    const named = { ...buyersLead, seller_id: 'sl_1', seller_name: 'Acme Leads' };
    expect(distributionPairs(named, 'buyer')).toContainEqual(['Seller source', 'Acme Leads (sl_1)']);
  });
});

describe('an operator\'s lead', () => {
  it('lists seller, buyer and price', () => {
    const lead = { ...buyersLead, seller_id: 'sl_1', campaign_id: 'cp_1', distribution: { ...buyersLead.distribution, payout: 42 } };
    expect(leadCells(lead, 'operator')).toEqual(expect.arrayContaining(['sl_1', 'by_1', '$60.00']));
    expect(distributionPairs(lead, 'operator')).toContainEqual(['Seller payout', '$42.00']);
  });
});

describe('the buyer form\'s seller names option', () => {
  it('is sent as a boolean', async () => {
    const { buildBuyerBody } = await import('../src/buyer_form');
    expect(buildBuyerBody({ name: 'Acme', 'visibility.seller_names': 'true' }).body).toEqual({ name: 'Acme', visibility: { seller_names: true } });
    expect(buildBuyerBody({ name: 'Acme', 'visibility.seller_names': 'false' }).body).toEqual({ name: 'Acme', visibility: { seller_names: false } });
  });
});

describe('searchPath', () => {
  it('finds from the first page, keeping the filters', () => {
    const current = new URLSearchParams('status=delivered&cursor=abc&q=old');
    expect(searchPath(current, '  Jane@Example.com ')).toBe('/leads?status=delivered&q=Jane%40Example.com');
  });
  it('drops the search for a blank text', () => {
    expect(searchPath(new URLSearchParams('q=old&vertical=solar'), '   ')).toBe('/leads?vertical=solar');
    expect(searchPath(new URLSearchParams(), '')).toBe('/leads');
  });
  it('from the top bar: only the search', () => {
    expect(searchPath(new URLSearchParams(), 'ld_01HF0000000000000000000000')).toBe('/leads?q=ld_01HF0000000000000000000000');
  });
});

describe('the person on the lead page', () => {
  it('shows the consent, the user agent and the custom fields the lead holds, and nothing absent', () => {
    const pairs = personPairs({
      first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '+12125550123', zip_code: '90210',
      user_agent: 'Mozilla/5.0', landing_page: 'lp-auto-1', ip_address: null, tcpa_consent: true,
      tcpa_consent_text: 'I agree to be called.', custom_fields: { vehicle_year: 2019, credit_rating: 'good' },
    });
    expect(pairs).toEqual([
      ['Name', 'Ada Lovelace'], ['E-mail', 'ada@example.com'], ['Phone', '+12125550123'], ['ZIP', '90210'],
      ['User agent', 'Mozilla/5.0'], ['Landing page', 'lp-auto-1'], ['TCPA consent', 'yes'],
      ['Consent text', 'I agree to be called.'], ['vehicle_year', '2019'], ['credit_rating', 'good'],
    ]);
  });
  it('keeps the rows of name, e-mail and phone for a reader the API gave none of them', () => {
    expect(personPairs({ tcpa_consent: false })).toEqual([['Name', null], ['E-mail', null], ['Phone', null], ['TCPA consent', 'no']]);
  });
});
