// Second chances in the dashboard (docs/reoffers.md): a lead nobody bought live (the one buyer's
// bid is under its own live floor) is sold aged a second later to the same buyer, which takes
// aged leads at $3.00. The operator's page of the lead shows the live attempt, then the
// re-offer's post; the revenue report says how much came from aged sales; the unsold report
// how many unsold leads were offered again and sold aged. Started by tests/web/e2e.sh with its
// own leadflow-ingest (tests/web/e2e_reoffers.env: the vertical's re-offer policy).
import assert from 'node:assert/strict';
import { base, buyerUrl, suffix, api, lead, shot, openBrowser } from './e2e_lib.mjs';

const ops = { email: `ops-ro-${suffix}@example.com`, password: 'operator password 1' };

const buyer = await api('POST', '/v1/buyers', {
  name: `Aged buyer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 1000 },
  pricing: { model: 'bid', min_bid: 20, aged_price: 3 },
  accepts_aged: true,
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const buyerId = buyer.body.data.buyer_id;
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Olive Operator', password: ops.password, account: 'operator' })).status, 201);
const posted = await api('POST', '/v1/leads', lead(1));
assert.equal(posted.status, 201, JSON.stringify(posted.body));
assert.equal(posted.body.distribution.delivery_status, 'unsold', JSON.stringify(posted.body));
const id = posted.body.lead_id;

// The re-offer runs a second after the receipt; the lead reads delivered once it sold aged.
let sold;
for (let i = 0; i < 100; i++) {
  sold = (await api('GET', `/v1/leads/${id}`)).body.data;
  if (sold.status === 'delivered') break;
  await new Promise((r) => setTimeout(r, 200));
}
assert.equal(sold.status, 'delivered', JSON.stringify(sold));
assert.equal(sold.attempts.at(-1).reoffer, 1, JSON.stringify(sold.attempts));
assert.equal(sold.distribution.price, 3);

const { page, signIn, run } = await openBrowser();

await run(async () => {
  await signIn(ops);
  // The timeline: the live ping (its bid under the floor), then the re-offer's accepted post.
  await page.goto(`${base}/leads/${id}`);
  await page.getByRole('heading', { name: new RegExp(`Lead ${id}`) }).waitFor();
  const timeline = page.locator('table').filter({ hasText: 'Re-offer 1' });
  await timeline.waitFor();
  const offers = await timeline.locator('tbody tr').evaluateAll((rows) => rows.map((r) => [r.cells[1].textContent, r.cells[3].textContent, r.cells[5].textContent]));
  assert.deepEqual(offers[0].slice(0, 2), ['Live', 'ping'], JSON.stringify(offers));
  assert.deepEqual(offers.at(-1), ['Re-offer 1', 'post', 'accepted'], JSON.stringify(offers));
  await timeline.scrollIntoViewIfNeeded();
  await shot(page, 'lead-timeline-reoffer');

  // The revenue report by buyer: the buyer's one sale, aged, at $3.00.
  await page.goto(`${base}/reports?kind=revenue&group_by=buyer`);
  await page.getByRole('heading', { name: 'Revenue report' }).waitFor();
  const revenue = page.locator('table').filter({ hasText: 'aged revenue' });
  await revenue.waitFor();
  const heads = await revenue.locator('thead th').allTextContents();
  const cell = (row, name) => revenue.locator('tbody tr').nth(row).locator('td, th').nth(heads.indexOf(name));
  for (const name of ['aged sales', 'aged revenue', 'aged payout', 'aged margin']) assert.ok(heads.includes(name), `${name} in ${heads}`);
  assert.equal((await cell(0, 'aged sales').textContent()).trim(), '1');
  assert.match(await cell(0, 'aged revenue').textContent(), /\$3\.00/);
  await shot(page, 'revenue-aged');
  // The operator's table is wider than the page: it scrolls in its own frame (the page does
  // not), to the aged columns.
  const wrap = page.locator('.table-wrap').filter({ hasText: 'aged revenue' });
  assert.ok(await wrap.evaluate((w) => w.scrollWidth > w.clientWidth), 'the table scrolls in its frame');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scroll of the page');
  await wrap.evaluate((w) => { w.scrollLeft = w.scrollWidth; });
  assert.match(await cell(0, 'aged margin').textContent(), /\$3\.00/);  // no seller: no payout
  await shot(page, 'revenue-aged-columns');

  // The unsold report: the lead went unsold live (below the buyer's floor), was offered again
  // and sold aged.
  await page.goto(`${base}/reports?kind=unsold&group_by=reason`);
  await page.getByRole('heading', { name: 'Unsold report' }).waitFor();
  const unsold = page.locator('table').filter({ hasText: 'offered again' });
  await unsold.waitFor();
  const row = await unsold.locator('tbody tr').first().locator('td, th').allTextContents();
  assert.deepEqual(row.map((t) => t.trim()), ['below_min_bid', '1', '1', '1'], JSON.stringify(row));
  await shot(page, 'unsold-second-chances');
});
void buyerId;
