// Rotating a postback endpoint's secret in Debian's chromium: a seller user adds an endpoint under
// Settings → Postbacks, rotates its secret from the list (a confirmation asks first, and for how
// long the old secret keeps signing), is shown the new secret once and the old one's expiry; a
// lead it posts then reaches a receiver of our own signed with both secrets (two v1 values over
// one timestamp and body), each of which verifies as a receiver holding either secret would.
// Started by tests/web/e2e.sh (E2E_*); screenshots in E2E_SHOTS.
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { base, api, lead, shot, suffix, openBrowser } from './e2e_lib.mjs';

// The seller's receiver: keeps every request's t and v1 values ("any v1 matches" is the rule).
const received = [];
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const parts = String(req.headers['leadflow-signature'] ?? '').split(',').map((p) => p.split('='));
    const t = parts.find(([k]) => k === 't')?.[1];
    const v1s = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
    received.push({ t, v1s, body });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{}');
  });
});
await new Promise((ok) => receiver.listen(0, '127.0.0.1', ok));
const receiverUrl = `http://127.0.0.1:${receiver.address().port}/rotating`;
const signedBy = (r, secret) => {
  const mac = createHmac('sha256', secret).update(`${r.t}.${r.body}`).digest('hex');
  return Math.abs(Date.now() / 1000 - Number(r.t)) <= 300 && r.v1s.some((v) => v.length === mac.length && timingSafeEqual(Buffer.from(v), Buffer.from(mac)));
};
const waitFor = async (what, cond, ms = 20000) => {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) if (cond()) return;
  assert.fail(`timed out waiting for ${what}`);
};

// A buyer of our own that bids on every ping and takes every post.
const buying = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(JSON.stringify(req.url === '/ping' ? { bid: 11.5 } : { accepted: true, buyer_lead_id: `rot-${Date.now()}` }));
  });
});
await new Promise((ok) => buying.listen(0, '127.0.0.1', ok));
const buyerUrl = `http://127.0.0.1:${buying.address().port}`;
const buyer = await api('POST', '/v1/buyers', {
  name: `Rotation buyer ${suffix}`, verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post`, timeout_ms: 2000 },
  pricing: { model: 'bid', min_bid: 1 },
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
const seller = (await api('POST', '/v1/sellers', { name: `Rotating Seller ${suffix}` })).body.data;
const who = { email: `rotate-${suffix}@example.com`, password: 'rotating seller password' };
assert.equal((await api('POST', '/v1/users', { email: who.email, name: 'Rory Rotate', password: who.password, account: 'seller', seller_id: seller.seller_id })).status, 201);
const key = (await api('POST', '/v1/api-keys', { name: 'rotation', seller_id: seller.seller_id })).body.data.key;

const { page, settings, signIn, run } = await openBrowser({ timezoneId: 'UTC' });
await run(async () => {
  await signIn(who);
  await settings('Postbacks');
  await page.getByRole('heading', { name: 'Postbacks', exact: true }).waitFor();
  await page.getByLabel('URL').fill(receiverUrl);
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const first = await page.locator('#secret-value').innerText();
  assert.match(first, /^pbs_[0-9a-f]{64}$/);
  const list = page.locator('.postback-list');
  await list.getByText('never rotated').waitFor();

  // Rotate: asked first; cancelling changes nothing.
  await list.getByRole('button', { name: `Rotate secret of ${receiverUrl}` }).click();
  await page.getByRole('heading', { name: 'Rotate the signing secret?' }).waitFor();
  await page.getByRole('button', { name: 'Cancel' }).click();
  assert.equal(await page.getByRole('heading', { name: 'Rotate the signing secret?' }).count(), 0);
  await list.getByRole('button', { name: `Rotate secret of ${receiverUrl}` }).click();
  assert.equal(await page.getByLabel('Keep the old secret valid for').inputValue(), '86400', '24 hours by default');
  await shot(page, 'rotate-confirm');

  const before = Date.now();
  await page.locator('#postback-rotate').getByRole('button', { name: 'Rotate secret' }).click();
  await page.getByRole('heading', { name: 'Secret rotated' }).waitFor();
  const second = await page.locator('#secret-value').innerText();  // the old one left the page
  assert.match(second, /^pbs_[0-9a-f]{64}$/);
  assert.notEqual(second, first);
  const old = await page.locator('#postback-old-secret').innerText();
  assert.match(old, /still signs .* until /, old);
  await list.getByText(/old secret valid until/).waitFor();
  // The API says the same: 24 hours from the rotation, and the secret nowhere but in its answer.
  const endpoint = (await api('GET', '/v1/postback-endpoints', undefined, key)).body.data[0];
  assert.equal(endpoint.secret, undefined);
  const expires = Date.parse(endpoint.previous_secret_expires_at);
  assert.ok(Math.abs(expires - before - 86400000) < 60000, `expires ${endpoint.previous_secret_expires_at}`);
  await shot(page, 'rotate-new-secret');

  // A lead posted once the senders read their endpoints again (every 2 s): signed with both.
  await new Promise((r) => setTimeout(r, 2500));
  const posted = await fetch(`${base}/v1/leads`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Prefer: 'wait=5' }, body: JSON.stringify(lead(1)) });
  assert.ok(posted.ok, `the lead was taken (${posted.status})`);
  await waitFor('the postback', () => received.length >= 1);
  const got = received[0];
  assert.equal(got.v1s.length, 2, `two v1 values: ${got.v1s}`);
  assert.ok(signedBy(got, second), 'verifies with the new secret');
  assert.ok(signedBy(got, first), 'verifies with the old secret');
  assert.ok(!signedBy(got, `pbs_${'0'.repeat(64)}`), 'and with no other');

  // Narrow, the list and the new secret still fit.
  await page.setViewportSize({ width: 375, height: 800 });
  await shot(page, 'rotate-narrow');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 1, `the page fits 375 px (${overflow} px too wide)`);

  // Rotating again while the old secret still signs would end it at once: refused, saying until
  // when, and nothing rotated.
  await page.setViewportSize({ width: 1280, height: 800 });
  await list.getByRole('button', { name: `Rotate secret of ${receiverUrl}` }).click();
  await page.locator('#postback-rotate').getByRole('button', { name: 'Rotate secret' }).click();
  await page.locator('#postback-rotate').getByText(/still signs until .*: another rotation now would end it at once/).waitFor();
  await shot(page, 'rotate-refused');
  const unchanged = (await api('GET', '/v1/postback-endpoints', undefined, key)).body.data[0];
  assert.equal(unchanged.secret_rotated_at, endpoint.secret_rotated_at, 'nothing rotated');
});
receiver.close();
buying.close();
