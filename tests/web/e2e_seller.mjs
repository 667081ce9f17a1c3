// The seller's portal end to end in Debian's chromium (started by tests/web/e2e.sh, which runs
// leadflow-ingest and a buyer simulator buying auto_insurance): a new seller user follows the
// first-run guide (makes a key, copies the curl command, which is run as it is with fetch, and
// sees its lead arrive on the guide's page), reads its payouts per day and per campaign with the
// CSVs, and reads why a lead in a vertical no buyer buys went unsold, at 1280 and 375 px.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { base, buyerUrl, suffix, api, lead, shot, assertLabelsApart, openBrowser } from './e2e_lib.mjs';

// Seed: a buyer of auto_insurance, the seller Sigma with a campaign, and Sigma's user.
const buyer = await api('POST', '/v1/buyers', {
  name: `Sigma's buyer ${suffix}`, verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 2000 },
  pricing: { model: 'bid', min_bid: 1 },
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const buyerId = buyer.body.data.buyer_id;
const seller = (await api('POST', '/v1/sellers', { name: `Sigma ${suffix}` })).body.data;
const campaign = await api('POST', '/v1/campaigns', { seller_id: seller.seller_id, name: `Sigma web ${suffix}`, vertical: 'auto_insurance', payout: { model: 'fixed', value: 5 } });
assert.equal(campaign.status, 201, JSON.stringify(campaign.body));
const campaignKey = campaign.body.data.campaign_key;
const sigma = { email: `sigma-${suffix}@example.com`, password: 'sigma seller password' };
assert.equal((await api('POST', '/v1/users', { email: sigma.email, name: 'Sia Sigma', password: sigma.password, account: 'seller', seller_id: seller.seller_id })).status, 201);
const today = new Date().toISOString().slice(0, 10); // the browser and the user are in UTC

// A lead's final state, read with the seller's key once it is decided.
async function decided(id, key) {
  for (let i = 0; i < 100; i++) {
    const got = await api('GET', `/v1/leads/${id}`, undefined, key);
    if (got.status === 200 && got.body.data.status !== 'pending') return got.body.data;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`lead ${id} was not decided`);
}

const { page, context, menu, signIn, run } = await openBrowser();
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
// The guide's watch asks for the newest lead; counted to see it stop when the page is left.
let newestAsks = 0;
page.on('request', (r) => r.url().endsWith('/v1/leads?limit=1') && (newestAsks += 1));

await run(async () => {
  // A new seller: its overview, leads and settings point to the guide.
  await signIn(sigma);
  assert.equal(await menu('Payouts').count(), 1, 'Payouts in a seller\'s menu');
  await page.getByText('No leads yet').waitFor();
  await menu('Leads').click();
  await page.locator('#get-started').waitFor();
  await menu('Settings').click();
  await page.locator('#get-started-hint').waitFor();
  await menu('Overview').click();
  await page.getByRole('link', { name: 'get started step by step' }).click();
  await page.getByRole('heading', { name: 'Get started' }).waitFor();
  assert.match(await page.locator('#curl').textContent(), /Bearer YOUR_API_KEY/, 'a place for the key until one is made');
  await page.getByText('Waiting for a new lead').waitFor();
  await shot(page, 'guide');

  // Step 1: a key made on the page, shown once; step 2: the command holds it.
  await page.getByLabel('Key name').fill(`guide key ${suffix}`);
  await page.getByRole('button', { name: 'Make the key' }).click();
  const key = (await page.locator('#secret-value').textContent()).trim();
  assert.match(key, /^lfk_/);
  await page.getByText('The command holds your new key').waitFor();
  await page.locator('#copy-curl').click();
  await page.getByText('Copied.').waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.equal(copied, await page.locator('#curl').textContent(), 'the copy is the command shown');
  await shot(page, 'guide-key');

  // The command as copied, run as curl would: its address, key and body.
  const url = /^curl -X POST (\S+) \\/.exec(copied)[1];
  assert.equal(url, `${base}/v1/leads`, "this server's address");
  assert.equal(/-H 'Authorization: Bearer (\S+)'/.exec(copied)[1], key);
  const body = /-d '([\s\S]*)'$/.exec(copied)[1].replace(/'\\''/g, "'");
  assert.equal(JSON.parse(body).vertical, 'auto_insurance', "the vertical of the seller's campaign");
  const posted = await fetch(url, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body });
  assert.ok(posted.status === 201 || posted.status === 202, `the guide's lead: ${posted.status} ${await posted.clone().text()}`);
  const guideLead = (await posted.json()).lead_id;

  // Step 3: the lead arrives on the page, with its status and payout once decided.
  await page.locator(`#arrived a[href="/leads/${guideLead}"]`).waitFor({ timeout: 15000 });
  await page.locator('#arrived-status', { hasText: 'delivered' }).waitFor({ timeout: 15000 });
  const sold = await decided(guideLead, key);
  assert.equal(sold.status, 'delivered');
  assert.equal(await page.locator('#arrived-payout').textContent(), `$${sold.distribution.payout.toFixed(2)}`);
  await shot(page, 'guide-arrived');
  await page.setViewportSize({ width: 375, height: 800 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'the guide fits 375 px');
  await shot(page, 'guide-arrived-375px');
  await page.setViewportSize({ width: 1280, height: 800 });

  // Leaving the page ends the watch.
  await menu('Leads').click();
  await page.locator(`a[title="${guideLead}"]`).waitFor();
  const asked = newestAsks;
  await page.waitForTimeout(4500);
  assert.equal(newestAsks, asked, 'no more asks once the guide is left');

  // A campaign's lead (Surface B), and a lead in a vertical no buyer buys.
  const viaCampaign = await fetch(base + '/api/v1/lead', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ SELLER_CAMPAIGN_KEY: campaignKey, first_name: 'Grace', last_name: 'Hopper', email_address: `grace.${suffix}@example.com`, phone_home: '2125551234', zip_code: '10001' }),
  });
  const campaignLead = (await viaCampaign.json()).lead_id;
  assert.ok(campaignLead, `the campaign's lead: ${viaCampaign.status}`);
  const campaignSold = await decided(campaignLead, key);
  assert.equal(campaignSold.status, 'delivered');
  const solar = await api('POST', '/v1/leads', lead(7, { vertical: 'solar' }), key);
  const solarLead = solar.body.lead_id;
  assert.equal((await decided(solarLead, key)).status, 'unsold');

  // Payouts: per day and per campaign, the seller's figures only, equal to the report's.
  await menu('Payouts').click();
  await page.getByRole('heading', { name: 'Payouts' }).waitFor();
  await page.locator('#payouts-by-day svg.chart-line').waitFor();
  const report = (await api('GET', `/v1/reports/revenue?from=${today}&to=${today}&group_by=campaign&tz=UTC`, undefined, key)).body.data;
  const total = Number(report.totals.payout);
  assert.equal(total, sold.distribution.payout + campaignSold.distribution.payout);
  assert.equal(await page.locator('#payout-payout .tile-value').textContent(), `$${total.toFixed(2)}`);
  const byCampaign = page.locator('#payouts-by-campaign');
  const campaignRow = byCampaign.getByRole('row', { name: new RegExp(`Sigma web ${suffix}`) });
  assert.match(await campaignRow.textContent(), /\$5\.00/);
  assert.match(await byCampaign.getByRole('row', { name: /Posted with an API key/ }).textContent(), new RegExp(`\\$${sold.distribution.payout.toFixed(2).replace('.', '\\.')}`));
  const heads = (await byCampaign.locator('th').allTextContents()).join('|');
  assert.doesNotMatch(heads, /revenue|margin|price/i, 'no buyer money or margin');
  assert.equal((await page.content()).includes(buyerId), false, 'no buyer named');
  for (const [id, what] of [['#csv-by-day', 'day'], ['#csv-by-campaign', 'campaign_id']]) {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator(id).click()]);
    assert.equal(download.suggestedFilename(), `revenue_${today}_${today}.csv`);
    const csv = readFileSync(await download.path(), 'utf8');
    const header = csv.split('\n')[0];
    assert.ok(header.includes(what) && header.includes('payout'), `${id}: ${header}`);
    assert.doesNotMatch(header, /revenue|margin/, `${id}: no revenue or margin`);
  }
  await shot(page, 'payouts');
  await page.getByRole('button', { name: '7 days' }).click();
  await page.waitForURL(/\/payouts\?range=7d$/);
  await page.locator('#payouts-by-day svg.chart-line').waitFor();
  await assertLabelsApart(page, 'payouts, 7 days at 1280 px');
  // Crossing 600 px draws the page again (its chart's labels are chosen for the size drawn).
  await page.evaluate(() => document.querySelector('svg.chart-line').setAttribute('data-drawn-for', 'wide'));
  await page.setViewportSize({ width: 375, height: 800 });
  await page.locator('#payouts-by-day svg.chart-line:not([data-drawn-for])').waitFor();
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'Payouts fit 375 px');
  await assertLabelsApart(page, 'payouts, 7 days at 375 px');
  await shot(page, 'payouts-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  // Days with no sale say so; a report that cannot be read says what went wrong, and Try again
  // draws the page once it can.
  await page.goto(base + '/payouts?range=custom&from=2025-01-01&to=2025-01-03');
  await page.getByText('No payout in these days').waitFor();
  await page.getByText('No lead sold in these days.').waitFor();
  await page.route('**/v1/reports/revenue*', (r) => r.abort());
  await menu('Payouts').click();
  await page.getByText('Could not reach the server').waitFor();
  await shot(page, 'payouts-unreachable');
  await page.unroute('**/v1/reports/revenue*');
  await page.getByRole('button', { name: 'Try again' }).click();
  await page.locator('#payouts-by-day svg.chart-line').waitFor();

  // Why the solar lead went unsold, in the seller's words: a hint in the list, a sentence on its
  // page; no buyer named.
  await menu('Leads').click();
  const solarRow = page.locator(`.lead-list tr:has(a[title="${solarLead}"])`);
  await solarRow.waitFor();
  assert.match(await solarRow.locator('.unsold-hint').textContent(), /^No buyer /);
  // With the hint under a status, every column still fits 1280 px: the payout is on screen.
  assert.ok(await page.evaluate(() => { const w = document.querySelector('.lead-list'); return w.scrollWidth <= w.clientWidth; }), 'the seller\'s lead list, with a reason, fits 1280 px');
  await shot(page, 'leads-with-reasons');
  await solarRow.locator(`a[title="${solarLead}"]`).click();
  await page.locator('#unsold-why').waitFor();
  assert.equal(await page.locator('#unsold-why .why-headline').textContent(), 'No buyer was buying the solar vertical when it arrived.');
  assert.equal((await page.content()).includes(buyerId), false, 'no buyer named');
  await shot(page, 'lead-unsold');
  await page.setViewportSize({ width: 375, height: 800 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'the lead fits 375 px');
  await shot(page, 'lead-unsold-375px');
  await page.setViewportSize({ width: 1280, height: 800 });

  // With leads, Settings no longer points to the guide.
  await menu('Settings').click();
  await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
  await page.locator('.settings-list').waitFor();
  await page.waitForLoadState('networkidle');
  assert.equal(await page.locator('#get-started-hint').count(), 0);

  // The change log's days are whole days in the zone asked: the guide's key was made today in
  // UTC, and Kiritimati's day after tomorrow holds nothing yet.
  const made = await api('GET', `/v1/audit?q=${encodeURIComponent(`guide key ${suffix}`)}&from=${today}&to=${today}&tz=UTC`);
  assert.equal(made.status, 200);
  assert.equal(made.body.data.length, 1);
  const later = new Date(Date.now() + 2 * 86400000).toISOString().slice(0, 10);
  assert.equal((await api('GET', `/v1/audit?q=${encodeURIComponent(`guide key ${suffix}`)}&from=${later}&tz=Pacific/Kiritimati`)).body.data.length, 0);
  assert.equal((await api('GET', `/v1/audit?from=${today}&tz=Mars/Olympus`)).status, 400);
});
