// Erasure in the dashboard (docs/erasure.md): the operator opens a sold lead, erases its personal
// data with the button and its confirmation; the page then says "Personal data erased on …" and
// shows no person, the buyer's page of it says the same, and the change log lists the erasure.
// Started by tests/web/e2e.sh with its own leadflow-ingest and buyer simulator.
import assert from 'node:assert/strict';
import { base, buyerUrl, suffix, api, lead, shot, openBrowser } from './e2e_lib.mjs';

const ops = { email: `ops-er-${suffix}@example.com`, password: 'operator password 1' };
const buys = { email: `buyer-er-${suffix}@example.com`, password: 'buyer password 12' };

// Seed: a buyer of auto_insurance with a user, an operator user, and a lead the buyer bought.
const buyer = await api('POST', '/v1/buyers', {
  name: `Erasure buyer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 1000 },
  pricing: { model: 'bid', min_bid: 1 },
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const buyerId = buyer.body.data.buyer_id;
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Olive Operator', password: ops.password, account: 'operator' })).status, 201);
assert.equal((await api('POST', '/v1/users', { email: buys.email, name: 'Bo Buyer', password: buys.password, account: 'buyer', buyer_id: buyerId })).status, 201);
const person = lead(1, { ip_address: '203.0.113.77' });
const posted = await api('POST', '/v1/leads', person);
assert.equal(posted.status, 201, JSON.stringify(posted.body));
assert.equal(posted.body.distribution.delivery_status, 'delivered', JSON.stringify(posted.body));
const id = posted.body.lead_id;

const { page, signIn, run, context } = await openBrowser();

await run(async () => {
  await signIn(ops);
  await page.goto(`${base}/leads/${id}`);
  await page.getByRole('heading', { name: new RegExp(`Lead ${id}`) }).waitFor();
  await page.getByText(person.email).first().waitFor();
  const card = page.locator('#erase-personal-data');
  await card.getByRole('button', { name: 'Erase personal data' }).waitFor();
  await shot(page, 'lead-before-erasure');

  // The button asks first (the walk's browser accepts the question), then the page reads erased.
  const asked = page.waitForEvent('dialog');
  await card.getByRole('button', { name: 'Erase personal data' }).click();
  const question = await asked;
  assert.match(question.message(), new RegExp(`Erase the personal data of lead ${id}\\?`));
  await page.locator('#erased-note').waitFor();
  assert.match(await page.locator('#erased-note').textContent(), /^Personal data erased on \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\./);
  assert.equal(await page.getByText(person.email).count(), 0, 'the e-mail is gone from the page');
  assert.equal(await page.getByText('203.0.113.77').count(), 0, 'the IP address is gone from the page');
  assert.equal(await page.locator('#erase-personal-data').count(), 0, 'an erased lead offers no second erasure');
  await shot(page, 'lead-after-erasure');

  const read = await api('GET', `/v1/leads/${id}`);
  assert.equal(read.body.data.email, '');
  assert.ok(read.body.data.erased_at, 'the API says when');

  // The change log lists it under Lead.
  await page.goto(`${base}/change-log?object_kind=lead`);
  await page.getByRole('heading', { name: 'Change log' }).waitFor();
  await page.locator('.change-list').getByText(id).first().waitFor();
  await shot(page, 'change-log-erasure');

  // The buyer's page of its purchase says the same.
  await context.clearCookies();
  await signIn(buys);
  await page.goto(`${base}/leads/${id}`);
  await page.locator('#erased-note').waitFor();
  assert.equal(await page.locator('#erase-personal-data').count(), 0, 'a buyer has no erase button');
  await shot(page, 'buyer-lead-erased');
});
