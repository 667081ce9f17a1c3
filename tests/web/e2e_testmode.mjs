// Test mode in the dashboard (docs/dashboard.md, "Test mode"): the operator turns a campaign to
// test mode in its form, a lead posted to it shows as Test in the lead list (rows at 1280 px,
// cards at 375 px) and on its page; a seller user sees its test lead with the badge and its
// campaign's mode; the operator turns a seller's test mode on and off. Started by
// tests/web/e2e.sh with its own leadflow-ingest and buyer simulator.
import assert from 'node:assert/strict';
import { base, buyerUrl, suffix, api, shot, openBrowser } from './e2e_lib.mjs';

const ops = { email: `ops-tm-${suffix}@example.com`, password: 'operator password 1' };
const dev = { email: `dev-tm-${suffix}@example.com`, password: 'seller developer pw' };

// Seed: a buyer of auto_insurance (so the vertical has buyers), a seller with a user, a campaign.
const buyer = await api('POST', '/v1/buyers', {
  name: `Keen buyer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 1000 },
  pricing: { model: 'bid', min_bid: 1 },
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const seller = (await api('POST', '/v1/sellers', { name: `Onboarding ${suffix}` })).body.data;
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Olive Operator', password: ops.password, account: 'operator' })).status, 201);
assert.equal((await api('POST', '/v1/users', { email: dev.email, name: 'Dee Developer', password: dev.password, account: 'seller', seller_id: seller.seller_id })).status, 201);
const campaign = (await api('POST', '/v1/campaigns', { seller_id: seller.seller_id, name: `Launch ${suffix}`, vertical: 'auto_insurance' })).body.data;
assert.equal(campaign.test_mode, false);

const { page, menu, signIn, run } = await openBrowser();

async function postToCampaign(n) {
  const res = await fetch(`${base}/api/v1/lead`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ SELLER_CAMPAIGN_KEY: campaign.campaign_key, first_name: 'Tess', last_name: `Tester${n}`, email_address: `tess.${suffix}.${n}@example.com`, phone_home: `202555${2000 + n}`, zip_code: '90210' }),
  });
  return { status: res.status, body: await res.json() };
}

await run(async () => {
  await signIn(ops);

  // The operator turns the campaign to test mode in its form.
  await menu('Campaigns').click();
  await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
  await page.getByRole('button', { name: `Edit Launch ${suffix}` }).click();
  const edit = page.locator('section.card', { hasText: `Edit Launch ${suffix}` });
  await edit.getByLabel('Test mode', { exact: true }).selectOption('true');
  await shot(page, 'campaign-form-test-mode');
  await edit.getByRole('button', { name: 'Save campaign' }).click();
  const row = page.getByRole('row', { name: new RegExp(`Launch ${suffix}`) });
  await row.getByText('Test mode', { exact: true }).waitFor();
  await shot(page, 'campaigns-test-mode');
  const saved = (await api('GET', `/v1/campaigns/${campaign.campaign_id}`)).body.data;
  assert.equal(saved.test_mode, true, 'the form saved the campaign in test mode');

  // A lead posted to it is a test: answered at once with what would have happened.
  let posted = await postToCampaign(1);
  for (let i = 0; i < 20 && posted.body.status !== 'test'; i++) {
    // The front reads a campaign again within a second of its change.
    await new Promise((r) => setTimeout(r, 200));
    posted = await postToCampaign(1 + i + 1);
  }
  assert.equal(posted.status, 200, JSON.stringify(posted.body));
  assert.equal(posted.body.status, 'test');
  assert.deepEqual(posted.body.would_have, { valid: true, stored_as_test: true, offered_to_buyers: false, vertical_has_active_buyers: true });
  const testLead = posted.body.lead_id;

  // It shows as Test in the list and on its page.
  await menu('Leads').click();
  const listed = page.locator(`.lead-list tr:has(a[title="${testLead}"])`);
  await listed.waitFor();
  assert.equal(await listed.locator('.badge-test').textContent(), 'Test');
  await shot(page, 'leads-test-badge');
  await page.getByLabel('Test leads', { exact: true }).selectOption('false');
  await page.getByRole('button', { name: 'Filter', exact: true }).click();
  await page.waitForURL(/test=false/);
  await page.getByText(/No lead matches these filters|newest first/).first().waitFor();
  assert.equal(await page.locator(`.lead-list tr:has(a[title="${testLead}"])`).count(), 0, 'real leads only: the test lead is not listed');
  await page.goto(`${base}/leads/${testLead}`);
  await page.getByRole('heading', { name: new RegExp(`Lead ${testLead}`) }).waitFor();
  assert.equal(await page.getByRole('heading', { level: 1 }).locator('.badge-test').textContent(), 'Test');
  await shot(page, 'lead-page-test');

  // The operator turns the seller's test mode on, then off again, on the campaigns page.
  await menu('Campaigns').click();
  await page.getByRole('button', { name: `Turn test mode on for Onboarding ${suffix}` }).click();
  await page.getByRole('button', { name: `Turn test mode off for Onboarding ${suffix}` }).waitFor();
  assert.equal((await api('GET', `/v1/sellers/${seller.seller_id}`)).body.data.test_mode, true);
  await shot(page, 'seller-test-mode-on');
  await page.getByRole('button', { name: `Turn test mode off for Onboarding ${suffix}` }).click();
  await page.getByRole('button', { name: `Turn test mode on for Onboarding ${suffix}` }).waitFor();
  assert.equal((await api('GET', `/v1/sellers/${seller.seller_id}`)).body.data.test_mode, false);
  const log = (await api('GET', '/v1/audit?object_kind=seller')).body.data;
  assert.deepEqual(log[0].changes, [{ field: 'test_mode', before: true, after: false }]);

  // The lead list as cards at 375 px: the badge is on the card.
  await page.setViewportSize({ width: 375, height: 800 });
  await page.goto(`${base}/leads`);
  const card = page.locator(`.lead-list tr:has(a[title="${testLead}"])`);
  await card.waitFor();
  const badge = await card.locator('.badge-test').boundingBox();
  assert.ok(badge && badge.x >= 0 && badge.x + badge.width <= 375, 'the Test badge is on the card at 375 px');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll at 375 px');
  await shot(page, 'leads-test-375px');
  await page.goto(`${base}/leads/${testLead}`);
  await page.getByRole('heading', { level: 1 }).locator('.badge-test').waitFor();
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'the lead page fits 375 px');
  await shot(page, 'lead-page-test-375px');

  // A seller user sees its test lead with the badge, and its campaign's test mode.
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
  await signIn(dev);
  await menu('Leads').click();
  const own = page.locator(`.lead-list tr:has(a[title="${testLead}"])`);
  await own.waitFor();
  assert.equal(await own.locator('.badge-test').textContent(), 'Test');
  await shot(page, 'seller-leads-test');
  await menu('Campaigns').click();
  await page.getByRole('row', { name: new RegExp(`Launch ${suffix}`) }).getByText('Test mode', { exact: true }).waitFor();
  assert.equal(await page.getByRole('button', { name: /Turn test mode/ }).count(), 0, 'a seller does not switch test modes');
  await shot(page, 'seller-campaigns-test-mode');
  await page.setViewportSize({ width: 375, height: 800 });
  await page.goto(`${base}/leads`);
  await page.locator(`.lead-list tr:has(a[title="${testLead}"]) .badge-test`).waitFor();
  await shot(page, 'seller-leads-test-375px');
});
