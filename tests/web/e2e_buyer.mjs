// A buyer's portal end to end: a buyer user signs in and sees its caps and rates on the overview,
// its purchases (bought from the walk's buyer simulator) with no seller's identity or payout,
// downloads its CSV, returns a lead from the page, sees refusals explained, pauses and resumes
// its buying and edits a cap the operator opened to it; at 1280 and 375 px.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, base, buyerUrl, lead, openBrowser, shot, suffix } from './e2e_lib.mjs';

// The world, through the API: a named seller posting with its own key, and a buyer at the
// simulator whose caps the operator opened to it.
const seller = (await api('POST', '/v1/sellers', { name: `Hidden Seller ${suffix}` })).body.data;
const sellerKey = (await api('POST', '/v1/api-keys', { name: 'seller', seller_id: seller.seller_id })).body.data.key;
const made = await api('POST', '/v1/buyers', {
  name: `Portal Buyer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post` },
  caps: { daily: 50, daily_budget: 1000 },
  self_service: { caps: true },
});
assert.equal(made.status, 201, JSON.stringify(made.body));
const buyerId = made.body.data.buyer_id;
const buyerKey = (await api('POST', '/v1/api-keys', { name: 'buyer', buyer_id: buyerId })).body.data.key;
const leads = [];
for (let n = 1; n <= 3; n++) {
  const r = await api('POST', '/v1/leads', lead(n), sellerKey);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.distribution.accepted, true, 'sold to the walk\'s buyer');
  leads.push(r.body.lead_id);
}
const bea = { email: `bea-${suffix}@example.com`, password: 'buyer portal password' };
assert.equal((await api('POST', '/v1/users', { email: bea.email, name: 'Bea Buyer', password: bea.password, account: 'buyer', buyer_id: buyerId })).status, 201);

const { page, menu, settled, signIn, run } = await openBrowser();
const noSeller = (text, what) => {
  assert.ok(!text.includes(seller.seller_id), `${what}: no seller id`);
  assert.ok(!text.includes(seller.name), `${what}: no seller name`);
  assert.ok(!/payout/i.test(text), `${what}: no payout`);
};
// A page is drawn once its "Loading…" is gone.
const fits = async (what) => assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 375, `${what}: nothing wider than 375 px`);

await run(async () => {
  await signIn(bea);
  // The overview: what it bought and spent, its returns, its rates, its caps as "x of y".
  await page.locator('#tile-spend').waitFor();
  await page.locator('#tile-returns').waitFor();
  await page.locator('#buyer-rates dt').getByText('Win rate', { exact: true }).waitFor();
  assert.equal(await page.locator('[data-limit="daily-cap"] .limit-text').textContent(), '3 of 50 leads');
  assert.equal(await page.locator('[data-limit="daily-budget"] .limit-text').textContent(), '$37.50 of $1,000.00');
  await settled();
  noSeller(await page.locator('main').innerText(), 'overview');
  await page.locator('#buyer-limits').waitFor();
  await shot(page, 'buyer-overview');

  // Its purchases, and their export: named after its days, no seller's identity or payout.
  await menu('Leads').click();
  await page.getByRole('heading', { name: 'Purchases' }).waitFor();
  for (const id of leads) await page.locator(`.lead-list a[title="${id}"]`).waitFor();
  noSeller(await page.locator('main').innerText(), 'purchases');
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#download-csv').click()]);
  assert.match(download.suggestedFilename(), /^leads_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.csv$/);
  const csv = readFileSync(await download.path(), 'utf8');
  await download.delete();
  const header = csv.split('\r\n')[0].split(',');
  assert.ok(header.includes('source_code') && header.includes('price'), header.join(','));
  for (const col of ['seller_id', 'seller_name', 'campaign_id', 'payout']) assert.ok(!header.includes(col), `no ${col} column`);
  noSeller(csv, 'CSV');
  assert.equal(csv.trim().split('\r\n').length, 1 + leads.length);
  await shot(page, 'buyer-purchases');

  // Returning a lead from its page: the window's end, "other" needs a note, the answer shown.
  await page.locator(`.lead-list a[title="${leads[0]}"]`).click();
  await page.locator('#return-lead').waitFor();
  assert.match(await page.locator('#return-standing').textContent(), /^You can return this lead until \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} \(a 7-day window\)\.$/);
  noSeller(await page.locator('main').innerText(), 'lead page');
  await page.getByLabel('Reason').selectOption('other');
  await page.locator('#return-submit').click();
  await page.locator('[data-field="note"] .field-error').getByText('needs a note').waitFor();
  await shot(page, 'buyer-return-needs-note');
  await page.getByLabel('Note').fill('the person never asked for a quote');
  await page.locator('#return-submit').click();
  await page.locator('#return-standing').getByText('You returned this lead.').waitFor();
  assert.equal(await page.locator('#return-submit').count(), 0, 'no form once returned');
  await shot(page, 'buyer-returned');

  // A refusal explained: the lead was returned meanwhile (by the buyer's own key).
  await page.goto(`${base}/leads/${leads[1]}`);
  await page.locator('#return-submit').waitFor();
  assert.equal((await api('POST', `/v1/leads/${leads[1]}/return`, { reason: 'fraud' }, buyerKey)).status, 201);
  await page.getByLabel('Reason').selectOption('duplicate');
  await page.locator('#return-submit').click();
  await page.locator('#return-answer').getByText(/^You already returned this lead on \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.$/).waitFor();
  await shot(page, 'buyer-return-refused');
  // A window of 0 days: said before asking, no form.
  assert.equal((await api('PUT', `/v1/buyers/${buyerId}`, { return_window_days: 0 })).status, 200);
  await page.goto(`${base}/leads/${leads[2]}`);
  await page.locator('#return-standing').getByText('Your account takes no returns').waitFor();
  assert.equal(await page.locator('#return-submit').count(), 0);
  await shot(page, 'buyer-no-returns');

  // Buying: pause and resume, a cap edited, filters and delivery read-only.
  await menu('Buying').click();
  await page.getByRole('heading', { name: 'Buying' }).waitFor();
  assert.equal(await page.locator('#buying-state').textContent(), 'active');
  await page.locator('#pause').click();
  await page.locator('#buying-state').getByText('paused').waitFor();
  assert.equal((await api('GET', `/v1/buyers/${buyerId}`)).body.data.status, 'paused');
  await shot(page, 'buyer-paused');
  await page.locator('#resume').click();
  await page.locator('#buying-state').getByText('active').waitFor();
  assert.equal((await api('GET', `/v1/buyers/${buyerId}`)).body.data.status, 'active');
  await page.getByLabel('Daily cap (leads)').fill('40');
  await page.getByRole('button', { name: 'Save caps' }).click();
  await page.getByText('Your caps were saved.').waitFor();
  assert.equal((await api('GET', `/v1/buyers/${buyerId}`)).body.data.caps.daily, 40);
  assert.match(await page.locator('[data-limit="daily-cap"] .limit-text').textContent(), /^\d of 40 leads$/);
  await page.locator('#buying-filters').getByText('set by the operator').waitFor();
  assert.equal(await page.locator('#filters-form').count(), 0, 'filters are not the buyer\'s to change');
  noSeller(await page.locator('main').innerText(), 'buying');
  await shot(page, 'buyer-buying');
  // The operator's change log names the buyer as the actor.
  const log = (await api('GET', `/v1/audit?object_kind=buyer&q=${buyerId}`)).body.data;
  assert.ok(log.filter((e) => e.actor.name.includes(`(buyer ${buyerId})`)).length >= 3, 'pause, resume and the cap in the change log');

  // At 375 px: cards, nothing hidden or wider than the screen.
  await page.setViewportSize({ width: 375, height: 800 });
  await page.reload();
  await page.locator('#buying-caps').waitFor();
  await fits('buying');
  await shot(page, 'buyer-buying-375px');
  await menu('Leads').click();
  const card = page.locator(`.lead-list tr:has(a[title="${leads[2]}"])`);
  await card.waitFor();
  const price = await card.locator('td[data-label="Price"]').boundingBox();
  assert.ok(price && price.x + price.width <= 375, 'the price is on the card at 375 px');
  await fits('purchases');
  await shot(page, 'buyer-purchases-375px');
  await page.goto(`${base}/leads/${leads[0]}`);
  await page.locator('#return-standing').waitFor();
  await fits('lead page');
  await shot(page, 'buyer-lead-375px');
  await menu('Overview').click();
  await page.locator('#buyer-limits').waitFor();
  await settled();
  await fits('overview');
  await shot(page, 'buyer-overview-375px');
});
