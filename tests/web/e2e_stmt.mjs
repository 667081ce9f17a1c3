// A seller's own account and a campaign's own re-offer policy in the dashboard: a seller user
// reads its account under Settings → Account (its statements' zone as the operator set it, its
// campaigns); the operator gives a campaign its own second chances on the campaign form (a bad
// list of delays refused at its field, then saved, shown in the list and in the change log),
// the seller reads the policy in its list; then none, then back to the vertical's. The pages at
// 1280 and at 375 px. Started by tests/web/e2e.sh with its own leadflow-ingest and buyer simulator.
import assert from 'node:assert/strict';
import { api, openBrowser, shot, suffix } from './e2e_lib.mjs';

const seller = (await api('POST', '/v1/sellers', { name: `Account Seller ${suffix}`, time_zone: 'America/New_York' })).body.data;
const campaign = (await api('POST', '/v1/campaigns', { seller_id: seller.seller_id, name: `Chances ${suffix}`, vertical: 'auto_insurance' })).body.data;
assert.equal(campaign.reoffer, null, "a new campaign follows its vertical's policy");
await api('POST', '/v1/campaigns', { seller_id: seller.seller_id, name: `Paused ${suffix}`, vertical: 'solar', status: 'paused' });
const users = {
  seller: { email: `sam-${suffix}@example.com`, password: 'seller account pw', account: 'seller', seller_id: seller.seller_id },
  operator: { email: `otto-${suffix}@example.com`, password: 'operator chances pw', account: 'operator' },
};
for (const [name, u] of Object.entries(users)) {
  const r = await api('POST', '/v1/users', { ...u, name: `${name} ${suffix}` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

const { page, menu, settings, settled, signIn, run } = await openBrowser();
const signOut = async () => {
  await page.locator('#sign-out').click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
};
const fits = () => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
const row = () => page.getByRole('row', { name: new RegExp(`Chances ${suffix}`) });

await run(async () => {
  // The seller's own account: its statements' zone and its campaigns, as the operator set them.
  await signIn(users.seller);
  await settings('Account');
  await page.getByRole('heading', { name: 'Account', exact: true }).waitFor();
  assert.equal(await page.locator('#account-zone').textContent(), 'America/New_York');
  assert.equal(await page.locator('#account-campaigns').textContent(), '2 (1 active)');
  await shot(page, 'seller-account');
  await page.setViewportSize({ width: 375, height: 800 });
  assert.ok(await fits(), 'the account fits at 375 px');
  await shot(page, 'seller-account-375');
  await page.setViewportSize({ width: 1280, height: 800 });
  // Its campaigns list says which second chances each follows.
  await menu('Campaigns').click();
  await row().waitFor();
  assert.match(await row().innerText(), /vertical's/);
  await signOut();

  // The operator gives the campaign its own policy on its form.
  await signIn(users.operator);
  await menu('Campaigns').click();
  await row().waitFor();
  await page.getByRole('button', { name: `Edit Chances ${suffix}` }).click();
  const edit = page.locator('section.card', { hasText: `Edit Chances ${suffix}` });
  await edit.getByLabel('Second chances', { exact: true }).selectOption('own');
  await edit.getByLabel('Re-offer delays (seconds)', { exact: true }).fill('3600, 60');
  await edit.getByRole('button', { name: 'Save campaign' }).click();
  // Delays that do not increase: refused at the field, nothing saved.
  await edit.locator('[data-field="reoffer.delays_seconds"] .field-error', { hasText: 'must increase' }).waitFor();
  await shot(page, 'campaign-reoffer-refused');
  assert.equal((await api('GET', `/v1/campaigns/${campaign.campaign_id}`)).body.data.reoffer, null);
  await edit.getByLabel('Re-offer delays (seconds)', { exact: true }).fill('60, 3600');
  await edit.getByLabel('Re-offer window (hours)', { exact: true }).fill('48');
  await shot(page, 'campaign-reoffer-form');
  await page.setViewportSize({ width: 375, height: 800 });
  assert.ok(await fits(), 'the campaign form fits at 375 px');
  await shot(page, 'campaign-reoffer-form-375');
  await page.setViewportSize({ width: 1280, height: 800 });
  await edit.getByRole('button', { name: 'Save campaign' }).click();
  await row().getByText('1 min, 1 h (within 48 h)').waitFor();
  await shot(page, 'campaigns-reoffer');
  const saved = (await api('GET', `/v1/campaigns/${campaign.campaign_id}`)).body.data;
  assert.deepEqual(saved.reoffer, { delays_seconds: [60, 3600], window_hours: 48 });
  const log = (await api('GET', `/v1/audit?object_kind=campaign&q=${encodeURIComponent(campaign.campaign_id)}`)).body;
  assert.ok(JSON.stringify(log).includes('reoffer'), `the change log holds the policy's change: ${JSON.stringify(log).slice(0, 400)}`);
  await page.setViewportSize({ width: 375, height: 800 });
  assert.ok(await fits(), 'the campaigns page fits at 375 px');
  await shot(page, 'campaigns-reoffer-375');
  await page.setViewportSize({ width: 1280, height: 800 });

  // None, then back to the vertical's.
  await page.getByRole('button', { name: `Edit Chances ${suffix}` }).click();
  await edit.getByLabel('Second chances', { exact: true }).selectOption('none');
  await edit.getByRole('button', { name: 'Save campaign' }).click();
  await row().getByText('none', { exact: true }).waitFor();
  assert.deepEqual((await api('GET', `/v1/campaigns/${campaign.campaign_id}`)).body.data.reoffer, { delays_seconds: [] });
  await page.getByRole('button', { name: `Edit Chances ${suffix}` }).click();
  assert.equal(await edit.getByLabel('Second chances', { exact: true }).inputValue(), 'none');
  await edit.getByLabel('Second chances', { exact: true }).selectOption('vertical');
  await edit.getByRole('button', { name: 'Save campaign' }).click();
  await row().getByText("vertical's", { exact: true }).waitFor();
  assert.equal((await api('GET', `/v1/campaigns/${campaign.campaign_id}`)).body.data.reoffer, null);
  await signOut();

  // The seller reads the campaign's policy, not set by it.
  await api('PUT', `/v1/campaigns/${campaign.campaign_id}`, { reoffer: { delays_seconds: [900] } });
  await signIn(users.seller);
  await menu('Campaigns').click();
  await row().getByText('15 min', { exact: true }).waitFor();
  assert.equal(await page.getByRole('button', { name: `Edit Chances ${suffix}` }).count(), 0, 'a seller edits no campaign');
  await shot(page, 'seller-campaigns-reoffer');
});
