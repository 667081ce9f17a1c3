// The Verticals page (Settings → Verticals, docs/dashboard.md) in Debian's chromium: the
// operator reads every vertical's rules in words, where they are set, and which campaigns have
// second chances of their own (linked); a vertical's own page with its fields; a seller the
// same without how buyers buy (no shared sales), and its own campaigns; a buyer only the vertical
// it buys, without the intake's lookback or any campaign; at 1280 and 375 px. The operator
// changes solar's second chances on its page (a list of delays refused at its field, then
// saved, read by every party, in the change log), resets them to the file's, and a save made
// after another operator changed them is refused as stale with a reload; a seller and a
// buyer see no control to change them. Started by
// tests/web/e2e.sh with its own leadflow-ingest (tests/web/e2e_verticals.env: solar's rules).
import assert from 'node:assert/strict';
import { base, buyerUrl, suffix, api, shot, openBrowser } from './e2e_lib.mjs';

const solarWords = "Offered again after 15 min, 2 h, 1 day; at most 3 times within 7 days; aged price from each buyer's aged_price, else its aged bid.";

// Seed: a seller with three solar campaigns (its own delay, none, the vertical's) and one of
// another seller's; a buyer of solar; a user of each party.
const seller = (await api('POST', '/v1/sellers', { name: `Sol ${suffix}` })).body.data;
const other = (await api('POST', '/v1/sellers', { name: `Other ${suffix}` })).body.data;
async function campaign(s, name, reoffer) {
  const made = await api('POST', '/v1/campaigns', { seller_id: s.seller_id, name, vertical: 'solar', ...(reoffer === undefined ? {} : { reoffer }) });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body.data;
}
const fast = await campaign(seller, `Sol fast ${suffix}`, { delays_seconds: [60, 3600] });
const never = await campaign(seller, `Sol final ${suffix}`, { delays_seconds: [] });
const follows = await campaign(seller, `Sol plain ${suffix}`);
const others = await campaign(other, `Other fast ${suffix}`, { delays_seconds: [120] });
const buyer = await api('POST', '/v1/buyers', {
  name: `Sun buyer ${suffix}`, verticals: ['solar'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 1000 },
  pricing: { model: 'bid', min_bid: 1, aged_price: 2 }, accepts_aged: true,
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const users = {};
for (const [who, extra] of [['operator', {}], ['seller', { seller_id: seller.seller_id }], ['buyer', { buyer_id: buyer.body.data.buyer_id }]]) {
  users[who] = { email: `${who}-vp-${suffix}@example.com`, password: `${who} password for verticals` };
  const made = await api('POST', '/v1/users', { email: users[who].email, name: `V ${who}`, password: users[who].password, account: who, ...extra });
  assert.equal(made.status, 201, JSON.stringify(made.body));
}

const { page, settings, signIn, run } = await openBrowser();
const row = (name) => page.locator('.vertical-list tbody tr').filter({ has: page.getByRole('link', { name, exact: true }) });
const noSideways = async (what) => assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), `${what}: no sideways scroll`);
async function signOut() {
  await page.locator('#sign-out').click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
}

await run(async () => {
  // The operator: every vertical, solar's rules in words, where they are set.
  await signIn(users.operator);
  await settings('Verticals');
  await page.getByRole('heading', { name: 'Verticals', exact: true }).waitFor();
  assert.match(await page.locator('#verticals-source').textContent(), /LEADFLOW_VERTICALS.*next restart/);
  assert.equal(await page.locator('.vertical-list tbody tr').count(), 11);
  const solar = row('solar');
  const text = await solar.textContent();
  assert.ok(text.includes(solarWords), text);
  assert.ok(text.includes('Sold to one buyer, or shared by up to 2 buyers.'), text);
  assert.ok(text.includes('A lead with the e-mail or phone of one received in the last 45 days is a duplicate'), text);
  assert.ok(text.includes("Sold only within 10 days of its receipt (the person's consent)."), text);
  assert.ok(text.includes('1 required: home_owner'), text);
  // Its campaigns with a policy of their own, every seller's, by name; not the one that follows it.
  const own = await solar.locator('td').last().getByRole('link').allTextContents();
  assert.deepEqual(own, [others.name, fast.name, never.name].sort((a, b) => a.localeCompare(b)));
  assert.ok(!(await solar.textContent()).includes(follows.name));
  assert.ok((await solar.textContent()).includes(`${never.name}: not offered again`));
  assert.match(await row('legal').textContent(), /Not offered again: a lead nobody buys live is final\./);
  await shot(page, 'operator-verticals');

  // Solar's own page: its rules, its campaigns' policies linked to each campaign, its fields.
  await solar.getByRole('link', { name: 'solar', exact: true }).click();
  await page.getByRole('heading', { name: 'Vertical solar' }).waitFor();
  assert.equal(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Verticals' }).getAttribute('aria-current'), 'page');
  assert.ok((await page.locator('#vertical-rules').textContent()).includes(solarWords));
  assert.match(await page.locator('#vertical-overrides').textContent(), new RegExp(`${fast.name}: 1 min, 1 h`));
  const homeOwner = page.locator('table').filter({ hasText: 'home_owner' }).locator('tbody tr').filter({ hasText: 'home_owner' });
  assert.deepEqual((await homeOwner.locator('td').allTextContents()).slice(0, 3), ['home_owner', 'boolean', 'yes']);
  await shot(page, 'operator-solar');
  await page.locator('#vertical-overrides').getByRole('link', { name: fast.name }).click();
  await page.waitForURL(`**/campaigns/${fast.campaign_id}/specification`);
  await page.goBack();
  await page.getByRole('heading', { name: 'Vertical solar' }).waitFor();

  // Its second chances changed live: from the file's, refused at the field, saved, then reset.
  const card = page.locator('#vertical-reoffer');
  assert.match(await card.locator('#vertical-reoffer-source').textContent(), /From the LEADFLOW_VERTICALS file/);
  assert.equal(await card.locator('#vertical-reoffer-reset').count(), 0, 'nothing to reset while the file says');
  assert.equal(await card.getByLabel('Second chances', { exact: true }).inputValue(), 'own');
  assert.equal(await card.getByLabel('Re-offer delays (seconds)', { exact: true }).inputValue(), '900, 7200, 86400');
  await card.getByLabel('Re-offer delays (seconds)', { exact: true }).fill('600, 60');
  await card.getByRole('button', { name: 'Save second chances' }).click();
  await card.locator('[data-field="reoffer.delays_seconds"] .field-error', { hasText: 'must increase' }).waitFor();
  await shot(page, 'operator-solar-reoffer-refused');
  assert.equal((await api('GET', '/v1/verticals/solar')).body.data.reoffer_source, 'configured');
  await card.getByLabel('Re-offer delays (seconds)', { exact: true }).fill('60, 600');
  await card.getByLabel('Re-offer window (hours)', { exact: true }).fill('24');
  await card.getByRole('button', { name: 'Save second chances' }).click();
  await page.locator('#vertical-rules', { hasText: 'Offered again after 1 min, 10 min; at most twice within 1 day' }).waitFor();
  assert.match(await page.locator('#vertical-rules').textContent(), /Second chances \(set by the operator\)/);
  assert.match(await page.locator('#vertical-reoffer-source').textContent(), /Set here on .*the LEADFLOW_VERTICALS file says: 15 min, 2 h, 1 d \(within 168 h\)/);
  const set = (await api('GET', '/v1/verticals/solar')).body.data;
  assert.deepEqual([set.reoffer, set.reoffer_source], [{ delays_seconds: [60, 600], window_hours: 24 }, 'operator']);
  const logged = (await api('GET', '/v1/audit?object_kind=vertical')).body.data;
  assert.ok(logged.some((e) => e.object.id === 'solar' && e.action === 'updated'), JSON.stringify(logged).slice(0, 400));
  await shot(page, 'operator-solar-reoffer-set');
  await page.setViewportSize({ width: 375, height: 800 });
  await noSideways('solar with its form at 375 px');
  await shot(page, 'operator-solar-reoffer-set-375');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.locator('#vertical-reoffer-reset').click();
  await page.locator('#vertical-reoffer-source', { hasText: 'From the LEADFLOW_VERTICALS file' }).waitFor();
  assert.ok((await page.locator('#vertical-rules').textContent()).includes(solarWords));
  assert.equal((await api('GET', '/v1/verticals/solar')).body.data.reoffer_source, 'configured');
  const reset = (await api('GET', '/v1/audit?object_kind=vertical')).body.data;
  assert.equal(reset[0].action, 'reset', JSON.stringify(reset[0]));

  // Another operator sets a policy while this page shows the reset one: the page's save is stale,
  // says so, saves nothing, and the reload shows the other operator's policy.
  const elsewhere = await api('PUT', '/v1/verticals/solar/reoffer', { reoffer: { delays_seconds: [3600] } });
  assert.equal(elsewhere.status, 200, JSON.stringify(elsewhere.body));
  await card.getByLabel('Re-offer delays (seconds)', { exact: true }).fill('120');
  await card.getByRole('button', { name: 'Save second chances' }).click();
  await page.getByText(/^Someone else changed this vertical's second chances after you opened it/).waitFor();
  await shot(page, 'operator-solar-reoffer-stale');
  assert.deepEqual((await api('GET', '/v1/verticals/solar')).body.data.reoffer.delays_seconds, [3600]);
  await page.getByRole('button', { name: "Reload the vertical's second chances" }).click();
  await page.locator('#vertical-rules', { hasText: 'Offered again after 1 h' }).waitFor();
  await page.locator('#vertical-reoffer-reset').click();
  await page.locator('#vertical-reoffer-source', { hasText: 'From the LEADFLOW_VERTICALS file' }).waitFor();

  // A phone: each vertical a card, nothing past the screen's edge.
  await page.setViewportSize({ width: 375, height: 800 });
  await noSideways('solar at 375 px');
  await shot(page, 'operator-solar-375');
  await page.goto(`${base}/settings/verticals`);
  await row('solar').waitFor();
  await noSideways('verticals at 375 px');
  await shot(page, 'operator-verticals-375');
  await page.goto(`${base}/settings/verticals/no_such`);
  await page.getByRole('heading', { name: 'No such vertical' }).waitFor();
  await page.setViewportSize({ width: 1280, height: 800 });
  await signOut();

  // The seller: every vertical, never how buyers buy; its own campaigns only.
  await signIn(users.seller);
  await settings('Verticals');
  await row('solar').waitFor();
  const sellerText = await page.locator('main').textContent();
  assert.ok(!sellerText.includes('shared by') && !sellerText.includes('Sold to one buyer'), 'no shared sales for a seller');
  assert.ok(!sellerText.includes(others.name), "no other seller's campaign");
  assert.ok((await row('solar').textContent()).includes('Offered again after 15 min, 2 h, 1 day; at most 3 times within 7 days; a lead sold then pays you by your payout rule.'));
  assert.deepEqual(await row('solar').locator('td').last().getByRole('link').allTextContents(), [fast.name, never.name]);
  await shot(page, 'seller-verticals');
  await page.goto(`${base}/settings/verticals/solar`);
  await page.getByRole('heading', { name: 'Vertical solar' }).waitFor();
  assert.equal(await page.locator('main #vertical-reoffer, main form').count(), 0, 'no control to change it for a seller');
  await signOut();

  // The buyer: only solar, its sharing and second chances, no intake lookback, no campaign.
  await signIn(users.buyer);
  await settings('Verticals');
  await row('solar').waitFor();
  assert.equal(await page.locator('.vertical-list tbody tr').count(), 1);
  const buyerText = await page.locator('main').textContent();
  assert.ok(!buyerText.includes('Duplicates') && !buyerText.includes(fast.name) && !buyerText.includes('Campaigns with'), buyerText);
  assert.ok(buyerText.includes('shared by up to 2 buyers'));
  assert.ok(buyerText.includes('at your aged price, else the aged bid you answer'));
  assert.match(await page.locator('#verticals-source').textContent(), /Your account takes aged leads, at \$2\.00 each\./);
  await shot(page, 'buyer-verticals');
  await page.goto(`${base}/settings/verticals/solar`);
  await page.getByRole('heading', { name: 'Vertical solar' }).waitFor();
  assert.equal(await page.locator('main #vertical-reoffer, main form').count(), 0, 'no control to change it for a buyer');
  await page.goto(`${base}/settings/verticals`);
  await row('solar').waitFor();
  await page.setViewportSize({ width: 375, height: 800 });
  await noSideways('buyer at 375 px');
  await shot(page, 'buyer-verticals-375');
  await page.goto(`${base}/settings/verticals/legal`);
  await page.getByRole('heading', { name: 'No such vertical' }).waitFor();
});
