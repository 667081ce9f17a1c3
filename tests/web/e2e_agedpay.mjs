// A seller's payouts of aged sales in Debian's chromium (docs/reoffers.md, "In the reports"):
// two leads nobody bought live (the one buyer's bid is under its own live floor) are sold aged a
// second later at the buyer's aged price, and the buyer returns one. The seller's Payouts page
// shows its aged payout, what of it was reversed and the net, as the revenue report it reads
// answers them, never the buyer's price or the margin (at 1280 and 375 px); the operator's
// revenue report has the aged net columns next to the other aged ones; a buyer reads its aged
// net spend and no payout. Started by tests/web/e2e.sh with its own leadflow-ingest
// (tests/web/e2e_agedpay.env: the vertical's re-offer policy).
import assert from 'node:assert/strict';
import { base, buyerUrl, suffix, api, lead, shot, openBrowser } from './e2e_lib.mjs';

const money = (v) => '$' + Number(v).toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ',');

// A full-page screenshot makes headless Chromium re-evaluate the phone-width media query, which
// draws a page holding a chart again (main.ts), sometimes before the picture is taken: the
// viewport is made as tall as the page first (its width kept), and the page must still be the
// one drawn (`ready` on it, `arrange`d) once the picture is taken.
async function steadyShot(page, ready, name, arrange = async () => {}) {
  const { width, height } = page.viewportSize();
  await page.locator('.page-status').waitFor({ state: 'detached' });
  await page.locator(ready).waitFor();
  await page.setViewportSize({ width, height: await page.evaluate(() => document.documentElement.scrollHeight) });
  await arrange();
  const drawn = await page.locator(ready).elementHandle();
  await shot(page, name);
  assert.ok(await drawn.evaluate((el) => el.isConnected), `${name}: the page was not drawn again while shot`);
  await page.setViewportSize({ width, height });
}

// Seed: a buyer of aged leads at $3.00 whose live bid (the simulator's $12.50) is under its own
// floor; the seller Theta with a key and a user; the buyer's key, to return a lead.
const buyer = await api('POST', '/v1/buyers', {
  name: `Aged payer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 1000 },
  pricing: { model: 'bid', min_bid: 20, aged_price: 3 },
  accepts_aged: true,
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const buyerId = buyer.body.data.buyer_id;
const buyerKey = (await api('POST', '/v1/api-keys', { name: 'aged buyer', buyer_id: buyerId })).body.data.key;
const seller = (await api('POST', '/v1/sellers', { name: `Theta ${suffix}` })).body.data;
const sellerKey = (await api('POST', '/v1/api-keys', { name: 'theta', seller_id: seller.seller_id })).body.data.key;
const theta = { email: `theta-${suffix}@example.com`, password: 'theta seller password' };
assert.equal((await api('POST', '/v1/users', { email: theta.email, name: 'Tea Theta', password: theta.password, account: 'seller', seller_id: seller.seller_id })).status, 201);
const ops = { email: `ops-ap-${suffix}@example.com`, password: 'operator password 1' };
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Olive Operator', password: ops.password, account: 'operator' })).status, 201);
const bo = { email: `bo-ap-${suffix}@example.com`, password: 'buyer user password' };
assert.equal((await api('POST', '/v1/users', { email: bo.email, name: 'Bo Buyer', password: bo.password, account: 'buyer', buyer_id: buyerId })).status, 201);

// Two leads, unsold live, then sold aged by the re-offer a second after each arrived.
const ids = [];
for (const n of [1, 2]) {
  const posted = await api('POST', '/v1/leads', lead(n), sellerKey);
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  assert.equal(posted.body.distribution.delivery_status, 'unsold', JSON.stringify(posted.body));
  ids.push(posted.body.lead_id);
}
const sold = [];
for (const id of ids) {
  let got;
  for (let i = 0; i < 100; i++) {
    got = (await api('GET', `/v1/leads/${id}`)).body.data;
    if (got.status === 'delivered') break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(got.status, 'delivered', JSON.stringify(got));
  assert.equal(got.attempts.at(-1).reoffer, 1, JSON.stringify(got.attempts));
  assert.equal(got.distribution.price, 3);
  sold.push(got);
}
// The buyer returns the first: its payout is reversed.
const back = await api('POST', `/v1/leads/${ids[0]}/return`, { reason: 'invalid_phone' }, buyerKey);
assert.equal(back.status, 201, JSON.stringify(back.body));
// In cents, then dollars: the report's decimals, without binary fractions adding up wrong.
const paid = sold.map((l) => Math.round(l.ledger[0].payout * 100));
const agedPayout = (paid[0] + paid[1]) / 100;
const reversed = paid[0] / 100;
const net = paid[1] / 100;
assert.ok(paid[0] > 0 && paid[0] < 300, `a payout under the price: ${paid}`);

// The report the seller reads: its aged payout, reversed and net; never the buyer's side.
const mine = (await api('GET', '/v1/reports/revenue?group_by=campaign', undefined, sellerKey)).body.data.totals;
assert.equal(mine.aged_sales, 2, JSON.stringify(mine));
assert.equal(mine.aged_returns, 1, JSON.stringify(mine));
assert.equal(mine.aged_payout, agedPayout, JSON.stringify(mine));
assert.equal(mine.aged_returned_payout, reversed, JSON.stringify(mine));
assert.equal(mine.aged_net_payout, net, JSON.stringify(mine));
for (const never of ['aged_revenue', 'aged_net_revenue', 'aged_margin', 'aged_net_margin', 'revenue', 'margin']) assert.ok(!(never in mine), `a seller reads no ${never}`);

let browser = await openBrowser();
await browser.run(async () => {
  const { page, menu, signIn } = browser;
  await signIn(theta);
  await menu('Payouts').click();
  await page.getByRole('heading', { name: 'Payouts' }).waitFor();
  await page.locator('#payouts-by-campaign table').waitFor();
  const tile = async (id) => (await page.locator(`#payout-${id} .tile-value`).textContent()).trim();
  const label = async (id) => (await page.locator(`#payout-${id} .tile-label`).textContent()).trim();
  assert.equal(await tile('aged-sales'), '2');
  assert.equal(await tile('aged-payout'), money(agedPayout));
  assert.equal(await label('aged-returns'), 'Aged sales returned');
  assert.equal(await tile('aged-returns'), '1', 'a count, not an amount');
  assert.equal(await label('aged-returned-payout'), 'Aged payout reversed');
  assert.equal(await tile('aged-returned-payout'), money(reversed));
  assert.equal(await label('aged-net-payout'), 'Aged payout (net)');
  assert.equal(await tile('aged-net-payout'), money(net));
  assert.equal(await tile('payout'), money(net), 'every sale was aged: the net payout is the aged net');
  // The per-campaign table: the API key's leads, with the same aged figures.
  const table = page.locator('#payouts-by-campaign table');
  const heads = (await table.locator('thead th').allTextContents()).map((t) => t.trim());
  for (const h of ['Payout of aged sales', 'Aged sales returned', 'Aged payout reversed', 'Aged payout (net)']) assert.ok(heads.includes(h), `${h} in ${heads}`);
  const row = (await table.getByRole('row', { name: /Posted with an API key/ }).locator('td, th').allTextContents()).map((t) => t.trim());
  assert.equal(row[heads.indexOf('Aged payout reversed')], money(reversed), JSON.stringify(row));
  assert.equal(row[heads.indexOf('Aged payout (net)')], money(net), JSON.stringify(row));
  // Never the buyer's side: no price, no refund, no margin, no buyer.
  const text = await page.locator('main').textContent();
  for (const never of ['$3.00', '$6.00', 'revenue', 'margin', 'Spend', buyerId]) assert.ok(!text.includes(never), `no ${never} on a seller's Payouts page`);
  await steadyShot(page, '#payout-aged-returned-payout', 'payouts-aged-returned');
  // Its CSV carries the aged net payout, and no buyer's column.
  const csv = await page.evaluate(async (href) => (await fetch(href)).text(), await page.locator('#csv-by-campaign').getAttribute('href'));
  const header = csv.split('\r\n')[0].split(',');
  assert.deepEqual(header.slice(-4), ['aged_payout', 'aged_returns', 'aged_returned_payout', 'aged_net_payout'], header.join(','));
  for (const never of ['aged_net_revenue', 'aged_net_margin', 'revenue', 'margin']) assert.ok(!header.includes(never), `no ${never} column`);
  // On a phone: the page drawn again for it (its chart's labels), the tiles wrap, no sideways
  // scroll.
  await page.evaluate(() => document.querySelector('svg.chart-line').setAttribute('data-drawn-for', 'wide'));
  await page.setViewportSize({ width: 375, height: 800 });
  await page.locator('#payouts-by-day svg.chart-line:not([data-drawn-for])').waitFor();
  assert.equal((await page.locator('#payout-aged-returned-payout .tile-value').textContent()).trim(), money(reversed));
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'Payouts fit 375 px');
  await steadyShot(page, '#payout-aged-net-payout', 'payouts-aged-returned-375px');
});

// The operator's revenue report: the aged net next to the other aged columns.
browser = await openBrowser();
await browser.run(async () => {
  const { page, signIn } = browser;
  await signIn(ops);
  await page.goto(`${base}/reports?kind=revenue&group_by=buyer`);
  await page.getByRole('heading', { name: 'Revenue report' }).waitFor();
  const revenue = page.locator('table').filter({ hasText: 'aged net margin' });
  await revenue.waitFor();
  const heads = (await revenue.locator('thead th').allTextContents()).map((t) => t.trim());
  const at = heads.indexOf('aged returned payout');
  assert.deepEqual(heads.slice(at, at + 4), ['aged returned payout', 'aged net revenue', 'aged net payout', 'aged net margin'], heads.join(', '));
  const cells = (await revenue.locator('tbody tr').first().locator('td, th').allTextContents()).map((t) => t.trim());
  assert.equal(cells[heads.indexOf('aged net revenue')], '$3.00');
  assert.equal(cells[heads.indexOf('aged net payout')], money(net));
  assert.equal(cells[heads.indexOf('aged net margin')], money(3 - net));
  const wrap = page.locator('.table-wrap').filter({ hasText: 'aged net margin' });
  await steadyShot(page, '.table-wrap', 'revenue-aged-net', () => wrap.evaluate((w) => { w.scrollLeft = w.scrollWidth; }));
});

// A buyer user: its aged spend net of its refund, and no payout.
browser = await openBrowser();
await browser.run(async () => {
  const { page, signIn } = browser;
  await signIn(bo);
  await page.goto(`${base}/reports?kind=revenue&group_by=day`);
  const revenue = page.locator('table').filter({ hasText: 'aged net spend' });
  await revenue.waitFor();
  const heads = (await revenue.locator('thead th').allTextContents()).map((t) => t.trim());
  assert.ok(!heads.some((h) => /payout|margin/.test(h)), heads.join(', '));
  const cells = (await revenue.locator('tbody tr').first().locator('td, th').allTextContents()).map((t) => t.trim());
  assert.equal(cells[heads.indexOf('aged net spend')], '$3.00');
  assert.ok(!(await page.locator('main').textContent()).includes(money(net)), 'no payout figure on a buyer\'s page');
  const wrap = page.locator('.table-wrap').filter({ hasText: 'aged net spend' });
  await steadyShot(page, '.table-wrap', 'buyer-aged-net-spend', () => wrap.evaluate((w) => { w.scrollLeft = w.scrollWidth; }));
});
