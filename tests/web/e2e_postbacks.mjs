// Postbacks end to end in Debian's chromium: a seller user adds an endpoint under Settings →
// Postbacks and is shown its signing secret once; a lead it posts is sold and the event reaches
// a receiver of our own here, which verifies the signature as a seller's would and first answers
// 500; the delivery log shows the failed attempt, a replay after the receiver recovers delivers
// it, and the attempts list their status and latency. The body names no buyer and no price.
// Started by tests/web/e2e.sh (E2E_*); screenshots in E2E_SHOTS.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { base, api, lead, shot, suffix, openBrowser } from './e2e_lib.mjs';

// The seller's receiver: verifies Leadflow-Signature (t=..,v1=hex HMAC-SHA256 over "t.body")
// with the secret the dashboard showed, within 300 s, and answers `answer`.
let secret = '';
let answer = 500;
const received = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const sig = Object.fromEntries(String(req.headers['leadflow-signature'] ?? '').split(',').map((p) => p.split('=')));
    const mac = createHmac('sha256', secret).update(`${sig.t}.${body}`).digest('hex');
    const ok = !!sig.v1 && sig.v1.length === mac.length && timingSafeEqual(Buffer.from(sig.v1), Buffer.from(mac)) && Math.abs(Date.now() / 1000 - Number(sig.t)) <= 300;
    received.push({ ok, id: req.headers['leadflow-event-id'], body: JSON.parse(body), answered: ok ? answer : 401 });
    res.writeHead(ok ? answer : 401, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
});
await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/leadflow`;
const waitFor = async (what, cond, ms = 20000) => {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) if (cond()) return;
  assert.fail(`timed out waiting for ${what}`);
};

// A buyer of our own that bids on every ping and takes every post.
const buying = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(req.url === '/ping' ? { bid: 14.25 } : { accepted: true, buyer_lead_id: `pb-${Date.now()}` }));
  });
});
await new Promise((ok) => buying.listen(0, '127.0.0.1', ok));
const buyerUrl = `http://127.0.0.1:${buying.address().port}`;
const buyer = await api('POST', '/v1/buyers', {
  name: `Postback buyer ${suffix}`, verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 2000 },
  pricing: { model: 'bid', min_bid: 1 },
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
// An attempt is recorded within the sender's next round (a fifth of a second) after its answer:
// the log is read again until its newest row shows `text`.
async function rowShows(text) {
  for (let i = 0; i < 50; i += 1) {
    await page.locator('.delivery-log tbody tr').first().waitFor();
    if (await page.locator('.delivery-log tbody tr').first().getByText(text).count()) return;
    await new Promise((r) => setTimeout(r, 200));
    await page.reload();
  }
  assert.fail(`the delivery log's newest row never showed ${text}`);
}
const seller = (await api('POST', '/v1/sellers', { name: `Postback Seller ${suffix}` })).body.data;
const who = { email: `postbacks-${suffix}@example.com`, password: 'postback seller password' };
assert.equal((await api('POST', '/v1/users', { email: who.email, name: 'Pat Postback', password: who.password, account: 'seller', seller_id: seller.seller_id })).status, 201);
const key = (await api('POST', '/v1/api-keys', { name: 'postbacks', seller_id: seller.seller_id })).body.data.key;

const { page, settings, signIn, run } = await openBrowser({ timezoneId: 'UTC' });
await run(async () => {
  await signIn(who);
  await settings('Postbacks');
  await page.getByRole('heading', { name: 'Postbacks', exact: true }).waitFor();
  await page.getByText('No endpoint yet').waitFor();
  await page.getByLabel('URL').fill(receiverUrl);
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  secret = await page.locator('#secret-value').innerText();
  assert.match(secret, /^pbs_[0-9a-f]{64}$/);
  await page.locator('.postback-list').getByRole('link', { name: receiverUrl }).waitFor();
  await shot(page, 'postbacks-endpoint-made');

  // A lead of the seller's, sold to the simulator: its lead.sold event goes out and is refused.
  const posted = await fetch(`${base}/v1/leads`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Prefer: 'wait=5' }, body: JSON.stringify(lead(1)) });
  const leadId = (await posted.json()).lead_id;
  await waitFor('the first attempt', () => received.length >= 1);
  assert.ok(received[0].ok, 'the signature verifies');
  assert.equal(received[0].body.type, 'lead.sold', JSON.stringify(received[0].body));
  assert.equal(received[0].body.data.lead_id, leadId);
  assert.equal(typeof received[0].body.data.payout, 'number');
  const text = JSON.stringify(received[0].body);
  for (const hidden of ['buyer_id', 'buyer_lead_id', 'price', 'bid', 'e2e-buyer']) assert.ok(!text.includes(hidden), `${hidden} is not in ${text}`);

  await page.getByRole('link', { name: 'Open its delivery log' }).click();
  await page.getByRole('heading', { name: 'Delivery log' }).waitFor();
  const row = page.locator('.delivery-log tbody tr').first();
  await rowShows('HTTP 500');
  await row.getByText('pending').waitFor();
  await shot(page, 'postbacks-log-failed');

  // The receiver recovers; the replay sends the event again at once, with the same id.
  answer = 200;
  await row.getByRole('button', { name: /^Replay/ }).click();
  await page.getByText('will be sent again').waitFor();
  await waitFor('the replay', () => received.some((r) => r.answered === 200));
  const delivered = received.find((r) => r.answered === 200);
  assert.equal(delivered.id, received[0].id, 'one event id through its attempts');
  await rowShows('delivered');
  await page.locator('.delivery-log tbody tr').first().getByRole('button', { name: /^Attempts/ }).click();
  await page.getByText('500', { exact: true }).waitFor();
  await page.getByText('200', { exact: true }).waitFor();
  await shot(page, 'postbacks-log-delivered');

  // Switched off from its page: it says since when, and what becomes of its events.
  await page.getByRole('button', { name: 'Switch off' }).click();
  await page.getByText(/^off since .*: the events of its time on wait/).waitFor();
  await page.getByRole('button', { name: 'Switch on' }).waitFor();
  await shot(page, 'postbacks-endpoint-off');
  await page.getByRole('button', { name: 'Switch on' }).click();
  await page.getByRole('button', { name: 'Switch off' }).waitFor();

  // Changed elsewhere after the page read it (the seller's key, say): the switch is refused as
  // stale, says so, and the endpoint keeps the other change until the page is reloaded.
  const endpointId = new URL(page.url()).pathname.split('/').pop();
  const elsewhere = await fetch(`${base}/v1/postback-endpoints/${endpointId}`, { method: 'PATCH', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify({ events: ['lead.sold', 'lead.unsold'] }) });
  assert.equal(elsewhere.status, 200, await elsewhere.text());
  await page.getByRole('button', { name: 'Switch off' }).click();
  await page.getByText(/^Someone else changed this postback endpoint after you opened it/).waitFor();
  await shot(page, 'postbacks-endpoint-stale');
  await page.getByRole('button', { name: 'Reload the postback endpoint' }).click();
  await page.getByText('lead.sold, lead.unsold').waitFor();
  await page.getByRole('button', { name: 'Switch off' }).waitFor();

  // The list shows the endpoint; narrow, the page still fits.
  await page.goto(`${base}/settings/postbacks`);
  await page.locator('.postback-list').getByRole('link', { name: receiverUrl }).waitFor();
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, 'postbacks-list-narrow');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `the page fits 375 px (${overflow} px too wide)`);
});
receiver.close();
buying.close();
