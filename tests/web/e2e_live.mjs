// The overview's live feed end to end in Debian's chromium: the operator's overview shows a lead
// posted through the API arrive in the Live feed, then its decision, and its counters move
// without a reload; a seller user sees its own lead and never another seller's; at 375 px it
// fits. A buyer of our own here answers its pings after 1.5 s, so a lead is seen received
// before it is decided. Started by tests/web/e2e.sh (E2E_*); screenshots in E2E_SHOTS.
import assert from 'node:assert/strict';
import http from 'node:http';
import { base, operatorKey, shots, suffix, api, lead, scan, openBrowser } from './e2e_lib.mjs';

const slow = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const answer = (body) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/ping') setTimeout(() => answer({ bid: 14.25 }), 1500);
    else answer({ accepted: true, buyer_lead_id: `slow-${Date.now()}` });
  });
});
await new Promise((ok) => slow.listen(0, '127.0.0.1', ok));
const slowUrl = `http://127.0.0.1:${slow.address().port}`;

const ops = { email: `live-ops-${suffix}@example.com`, password: 'operator password 1' };
const alpha = { email: `live-alpha-${suffix}@example.com`, password: 'alpha seller password' };
const sellerA = (await api('POST', '/v1/sellers', { name: `Alpha ${suffix}` })).body.data;
const sellerB = (await api('POST', '/v1/sellers', { name: `Beta ${suffix}` })).body.data;
const buyer = await api('POST', '/v1/buyers', {
  name: `Slow Buyer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${slowUrl}/ping`, post_url: `${slowUrl}/post`, timeout_ms: 5000 },
  pricing: { model: 'bid', min_bid: 1.0 },
  duplicate_lookback_days: 0,
});
assert.equal(buyer.status, 201, JSON.stringify(buyer.body));
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Olive Operator', password: ops.password, account: 'operator' })).status, 201);
assert.equal((await api('POST', '/v1/users', { email: alpha.email, name: 'Al Alpha', password: alpha.password, account: 'seller', seller_id: sellerA.seller_id })).status, 201);
const keyA = (await api('POST', '/v1/api-keys', { name: 'alpha', seller_id: sellerA.seller_id })).body.data.key;
const keyB = (await api('POST', '/v1/api-keys', { name: 'beta', seller_id: sellerB.seller_id })).body.data.key;

// A lead posted as a seller's system would, answered at once (202) while its auction runs.
async function postLead(n, key) {
  const res = await fetch(`${base}/v1/leads`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', Prefer: 'respond-async' },
    body: JSON.stringify(lead(n)),
  });
  const body = await res.json();
  assert.equal(res.status, 202, JSON.stringify(body));
  return body.lead_id;
}

const { page, run } = await openBrowser({ timezoneId: 'UTC' });
// What the screen shows, the feed scrolled into it, with the axe-core scan of the page. (A
// full-page capture changes the emulated screen, which draws a page holding a chart again.)
let shots_taken = 0;
async function shot(p, name) {
  await p.locator('section.live').scrollIntoViewIfNeeded();
  shots_taken += 1;
  const file = `${shots}/${String(shots_taken).padStart(2, '0')}-${name}.png`;
  await p.screenshot({ path: file });
  await scan(p, name);
  console.log(`e2e: ${name} ok (${file})`);
}
const line = (id) => page.locator(`#live-list li[data-lead="${id}"]`);
const tileValue = (id) => page.locator(`#${id} .tile-value`).innerText();

await run(async () => {
  // The operator's overview: the feed connects and says so in words.
  await page.goto(base + '/');
  await page.getByLabel('E-mail').fill(ops.email);
  await page.getByLabel('Password').fill(ops.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  const state = page.getByRole('status').filter({ hasText: /^(Live|Connecting…|Reconnecting)/ });
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();
  assert.equal(await state.count(), 1, 'the state is a role=status line');
  await page.getByRole('heading', { name: 'Live feed' }).waitFor();
  await shot(page, 'live-operator-connected');

  // A lead arrives, then is decided, in place; the counters move without a reload.
  await page.evaluate(() => (window.__notReloaded = true));
  const leadsBefore = await tileValue('tile-leads');
  const first = await postLead(1, keyA);
  await line(first).and(page.locator('.live-received')).waitFor({ timeout: 10000 });
  assert.match(await line(first).innerText(), /Received/);
  // The names are read at the feed's first event and the lines drawn again with them: until
  // then a line shows ids (on a loaded machine, the first line may come before the names).
  await line(first).filter({ hasText: new RegExp(`Ada Tester1 .*Alpha ${suffix}`) }).waitFor({ timeout: 10000 });
  await shot(page, 'live-operator-received');
  await line(first).and(page.locator('.live-decided')).waitFor({ timeout: 15000 });
  const decided = await line(first).innerText();
  assert.match(decided, /Sold, \$14\.25/);
  assert.match(decided, new RegExp(`Alpha ${suffix} → Slow Buyer ${suffix}`), 'names as the console shows them');
  assert.equal(await line(first).getByRole('link').getAttribute('href'), `/leads/${first}`);
  assert.equal(await page.locator('#live-list li').count(), 1, 'one line a lead');
  await page.waitForFunction(([before]) => document.querySelector('#tile-leads .tile-value')?.textContent !== before, [leadsBefore], { timeout: 15000 });
  assert.equal(Number(await tileValue('tile-leads')), Number(leadsBefore) + 1);
  await page.waitForFunction(() => document.querySelector('#tile-sold .tile-value')?.textContent === '1', null, { timeout: 15000 });
  // The chart, empty at load, now draws the day's lead (its last point above zero).
  await page.locator('#overview-chart svg.chart-line').waitFor({ timeout: 15000 });
  assert.equal(await page.locator('#overview-chart').getByText('No leads in these days').count(), 0);
  assert.equal(await page.evaluate(() => window.__notReloaded), true, 'no reload');
  await shot(page, 'live-operator-decided');

  // At 375 px the feed fits the screen.
  // Crossing 600 px draws the page again (it holds a line chart now): the feed is drawn anew,
  // with the lines already seen.
  const drawnBefore = await page.locator('#live-list').elementHandle();
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForFunction((el) => !el.isConnected, drawnBefore);
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();
  await page.locator('#live-list').scrollIntoViewIfNeeded();
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll at 375 px');
  const box = await page.locator('section.live').boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 375, 'the feed inside the screen');
  await shot(page, 'live-operator-375');
  const phoneList = await page.locator('#live-list').elementHandle();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.waitForFunction((el) => !el.isConnected, phoneList);

  // One stream at a time: the overview drawn again keeps one open, another page none (a stream
  // left open would hold one of the six connections the browser keeps to the server).
  const streams = async () => {
    const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${operatorKey}` } })).text();
    return Number(/^leadflow_live_connections (\S+)$/m.exec(text)?.[1]);
  };
  const waitStreams = async (n) => {
    // A stream the page closed ends at once where the server reads the close, and at the latest
    // at its next heartbeat (15 s), so up to 20 s.
    for (let i = 0; i < 100 && (await streams()) !== n; i += 1) await new Promise((ok) => setTimeout(ok, 200));
    assert.equal(await streams(), n, `${n} live streams open`);
  };
  for (const preset of ['7 days', '30 days', 'Today']) await page.getByRole('button', { name: preset }).click();
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();
  await waitStreams(1);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leads', exact: true }).click();
  await page.getByRole('heading', { name: 'Leads' }).first().waitFor();
  await waitStreams(0);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview', exact: true }).click();
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();

  // A seller user: its own lead appears, decided with its payout and no buyer; another seller's never.
  await page.locator('#sign-out').click();
  await page.getByLabel('E-mail').fill(alpha.email);
  await page.getByLabel('Password').fill(alpha.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();
  const others = await postLead(2, keyB);
  const own = await postLead(3, keyA);
  await line(own).and(page.locator('.live-decided')).waitFor({ timeout: 15000 });
  for (let i = 0; i < 100 && (await api('GET', `/v1/leads/${others}`)).body?.data?.status !== 'delivered'; i += 1) await new Promise((ok) => setTimeout(ok, 100));
  assert.equal((await api('GET', `/v1/leads/${others}`)).body.data.status, 'delivered', "Beta's lead was decided meanwhile");
  await new Promise((ok) => setTimeout(ok, 1500));  // three polls after it
  const ownText = await line(own).innerText();
  assert.match(ownText, /Sold, \$\d+\.\d\d payout/);
  assert.doesNotMatch(ownText, /Slow Buyer|14\.25/, 'a seller sees no buyer and no buyer price');
  assert.equal(await line(others).count(), 0, "another seller's lead never reaches the feed");
  assert.equal(await page.locator('#live-list li').count(), 1);
  await shot(page, 'live-seller');
  const sellerList = await page.locator('#live-list').elementHandle();
  await page.setViewportSize({ width: 375, height: 800 });
  await page.waitForFunction((el) => !el.isConnected, sellerList);
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'the seller’s overview fits 375 px');
  // The page drawn again for the phone's width keeps the lines already seen.
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();
  assert.match(await line(own).innerText(), /Sold/);
  await shot(page, 'live-seller-375');

  // A reconnection the feed cannot resume: the page's next stream is cut after naming an id of no
  // position of this store, so the browser reconnects with it as Last-Event-ID and the real feed
  // answers `event: reset`. The lines kept may be stale: the list starts again, and says why.
  const sellerPhoneList = await page.locator('#live-list').elementHandle();
  await page.setViewportSize({ width: 1280, height: 900 });
  // The overview is drawn again for the wider screen (its figures read first): the kept line
  // comes back with it.
  await page.waitForFunction((el) => !el.isConnected, sellerPhoneList);
  await line(own).waitFor();
  await page.locator('#live-state', { hasText: 'Live' }).waitFor();
  assert.equal(await page.locator('#live-list li').count(), 1, 'the line seen before is kept');
  let cut = false;
  await page.route('**/v1/live', (route) => {
    if (cut) return route.continue();
    cut = true;
    return route.fulfill({ status: 200, headers: { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-store' }, body: 'retry: 200\nid: not-a-position\n: cut here\n\n' });
  });
  const menu = (name) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  await menu('Leads').click();
  await menu('Overview').click();
  await page.locator('#live-state', { hasText: 'Live from now' }).waitFor({ timeout: 15000 });
  assert.ok(cut, 'the first stream was cut');
  assert.equal(await page.locator('#live-list li').count(), 0, 'the list starts again after a reset');
  await shot(page, 'live-seller-reset');
  await page.unroute('**/v1/live');
  const after = await postLead(4, keyA);
  await line(after).waitFor({ timeout: 15000 });
  assert.equal(await page.locator('#live-list li').count(), 1, 'the feed goes on after the reset');
});
slow.close();
