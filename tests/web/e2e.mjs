// The dashboard end to end in Debian's chromium, driven by playwright-core: the operator's and a
// seller's main walk. Started by tests/web/e2e.sh, which runs leadflow-ingest and a buyer
// simulator and sets E2E_*. Each step saves a screenshot to E2E_SHOTS (look at them: they are
// how the pages look). What the walks share is in e2e_lib.mjs.
import assert from 'node:assert/strict';
import { base, buyerUrl, suffix, api, lead, totp, nowStep, shot, contrast, assertLabelsApart, inZone, addDays, openBrowser } from './e2e_lib.mjs';

const ops = { email: `ops-${suffix}@example.com`, password: 'operator password 1' };
const alpha = { email: `alpha-${suffix}@example.com`, password: 'alpha seller password' };

// Seed: two sellers, an operator user, a seller user of Alpha; Beta posts a lead of its own.
const sellerA = (await api('POST', '/v1/sellers', { name: `Alpha ${suffix}` })).body.data;
const sellerB = (await api('POST', '/v1/sellers', { name: `Beta ${suffix}` })).body.data;
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Olive Operator', password: ops.password, account: 'operator' })).status, 201);
assert.equal((await api('POST', '/v1/users', { email: alpha.email, name: 'Al Alpha', password: alpha.password, account: 'seller', seller_id: sellerA.seller_id })).status, 201);
const keyB = (await api('POST', '/v1/api-keys', { name: 'beta', seller_id: sellerB.seller_id })).body.data.key;
const betaLead = (await api('POST', '/v1/leads', lead(1), keyB)).body.lead_id;
assert.ok(betaLead, 'Beta posted a lead');

// The browser is in Paris; the operator chooses Kiritimati (+14:00, so its day is not UTC's for
// most of the day): the pages follow the user's zone, not the browser's.
const { page, menu, settings, signIn, run } = await openBrowser({ timezoneId: 'Europe/Paris' });
const zoneName = 'Pacific/Kiritimati';

await run(async () => {
  // The page and its assets: security headers, caching, client routes, the API kept apart.
  const index = await page.goto(base + '/leads/some/client/route');
  assert.equal(index.status(), 200);
  const h = index.headers();
  assert.equal(h['content-security-policy'], "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'");
  assert.equal(h['x-frame-options'], 'DENY');
  assert.equal(h['referrer-policy'], 'no-referrer');
  assert.equal(h['x-content-type-options'], 'nosniff');
  assert.equal(h['cache-control'], 'no-cache');
  const html = await index.text();
  const script = /src="(\/assets\/[^"]+\.js)"/.exec(html)[1];
  const asset = await fetch(base + script);
  assert.equal(asset.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  assert.match(asset.headers.get('content-type'), /javascript/);
  assert.equal((await fetch(base + '/assets/nothing-here.js')).status, 404);
  const apiMiss = await fetch(base + '/v1/no-such-thing');
  assert.equal(apiMiss.status, 404);
  assert.match(apiMiss.headers.get('content-type'), /problem\+json/);

  // Sign in.
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
  await page.getByLabel('E-mail').fill(ops.email);
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByText('wrong e-mail or password').waitFor();
  await shot(page, 'sign-in-refused');
  await signIn(ops);
  await shot(page, 'overview');
  // The focus ring is at least 3:1 on the page, the overview's links at least 4.5:1.
  await page.keyboard.press('Tab');
  const ring = await page.evaluate(() => { const a = document.activeElement; return [getComputedStyle(a).outlineColor, getComputedStyle(document.body.parentElement).backgroundColor]; });
  assert.ok(contrast(ring[0], ring[1]) >= 3, `the focus ring ${ring[0]} on ${ring[1]}`);
  const linkColour = await page.getByRole('link', { name: 'See the leads' }).evaluate((a) => getComputedStyle(a).color);
  assert.ok(contrast(linkColour, ring[1]) >= 4.5, `the overview's links ${linkColour} on ${ring[1]}`);

  // Settings → Time zone: the browser's zone (Paris) suggested, the operator chooses Kiritimati;
  // the session keeps it, and every page below shows times and whole days in it.
  await settings('Time zone');
  await page.getByRole('heading', { name: 'Time zone' }).waitFor();
  assert.equal(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Time zone' }).getAttribute('aria-current'), 'page');
  await page.getByRole('button', { name: "Use this browser's zone (Europe/Paris)" }).click();
  assert.equal(await page.getByLabel('Time zone').inputValue(), 'Europe/Paris');
  await page.getByLabel('Time zone').selectOption(zoneName);
  await page.getByRole('button', { name: 'Save time zone' }).click();
  await page.getByText(`Saved: times are shown in ${zoneName}.`).waitFor();
  assert.equal((await page.evaluate(async () => (await fetch('/v1/session')).json())).user.time_zone, zoneName);
  await shot(page, 'settings-time-zone');

  // A buyer with an invalid URL: the error is shown next to the field; fixed, it is created.
  await menu('Buyers').click();
  await page.getByRole('link', { name: 'New buyer' }).click();
  await page.getByLabel('Name', { exact: true }).fill(`E2E Buyer ${suffix}`);
  await page.getByLabel('Verticals').fill('auto_insurance');
  await page.getByLabel('Ping URL').fill('not a url');
  await page.getByLabel('Post URL').fill(`${buyerUrl}/post`);
  await page.getByLabel('Timeout (ms)').fill('1000');
  await page.getByLabel('Minimum bid').fill('1');
  await page.getByRole('button', { name: 'Create buyer' }).click();
  const pingError = page.locator('[data-field="delivery.ping_url"] .field-error');
  await pingError.waitFor();
  assert.notEqual((await pingError.textContent()).trim(), '');
  assert.equal(await page.getByLabel('Ping URL').getAttribute('aria-invalid'), 'true');
  await shot(page, 'buyer-field-error');
  await page.getByLabel('Ping URL').fill(`${buyerUrl}/ping`);
  await page.getByRole('button', { name: 'Create buyer' }).click();
  await page.getByText('Buyer created.').waitFor();
  const buyerId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop());
  await shot(page, 'buyer-created');
  // A test ping against the buyer's endpoint: the simulator bids.
  await page.getByRole('button', { name: 'Send a test ping' }).click();
  await page.locator('.ping-result table').waitFor();
  const pingResult = await page.locator('.ping-result table').textContent();
  assert.match(pingResult, /\/ping/);
  assert.match(pingResult, /bid/);
  await shot(page, 'buyer-test-ping');
  // Someone else changes the buyer while its page is open: Save says so plainly and changes
  // nothing; reloaded, the page shows their change and Save works.
  assert.equal((await api('PUT', `/v1/buyers/${buyerId}`, { priority: 7 })).status, 200);
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Someone else changed this buyer after you opened it').waitFor();
  await shot(page, 'buyer-stale');
  await page.getByRole('button', { name: 'Reload the buyer' }).click();
  await page.getByLabel('Timeout (ms)').fill('1500');
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  await page.getByText('Saved.').waitFor();
  assert.equal((await api('GET', `/v1/buyers/${buyerId}`)).body.data.priority, 7);
  await menu('Buyers').click();
  await page.getByRole('link', { name: `E2E Buyer ${suffix}` }).waitFor();
  await shot(page, 'buyers');

  // The change log: both changes of the buyer, newest first, each field from what to what, by
  // who made it (the operator user in the dashboard, the operator key through the API).
  await menu('Change log').click();
  await page.getByLabel('Search', { exact: true }).fill(`e2e buyer ${suffix}`);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  const changeRows = page.locator('.change-list tbody tr');
  await changeRows.first().waitFor();
  assert.equal(await changeRows.count(), 3, 'created, changed through the API, changed here');
  const saved = await changeRows.nth(0).textContent();
  assert.match(saved, /Buyer updated/);
  assert.match(saved, /delivery\.timeout_ms: 1000 → 1500/);
  assert.match(saved, /dashboard/);
  assert.match(await changeRows.nth(1).textContent(), /priority: \S+ → 7/);
  assert.match(await changeRows.nth(2).textContent(), /Buyer created/);
  assert.ok(await page.evaluate(() => { const w = document.querySelector('.change-list'); return w.scrollWidth <= w.clientWidth; }), 'the change log fits 1280 px');
  await shot(page, 'change-log');
  await page.getByLabel('Search', { exact: true }).fill(`nothing ${suffix}`);
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('No change matches this search.').waitFor();

  // A campaign for Alpha: its key is shown once.
  await menu('Campaigns').click();
  await page.getByLabel('Seller', { exact: true }).selectOption(sellerA.seller_id);
  await page.getByLabel('Name').fill(`Alpha web ${suffix}`);
  await page.getByLabel('Payout value').fill('70');
  await page.getByRole('button', { name: 'Create campaign' }).click();
  const campaignKey = (await page.locator('#secret-value').textContent()).trim();
  assert.match(campaignKey, /^lfc_/);
  await shot(page, 'campaign-key-once');
  await page.reload();
  await page.getByRole('heading', { name: 'Campaigns' }).waitFor();
  assert.equal(await page.locator('#secret-value').count(), 0, 'the campaign key is shown once');
  assert.equal((await page.content()).includes(campaignKey), false);

  // The campaign's rate ceiling changed.
  await page.getByRole('button', { name: `Edit Alpha web ${suffix}` }).click();
  const editing = page.locator('section', { has: page.getByRole('heading', { name: `Edit Alpha web ${suffix}` }) });
  await editing.getByLabel('Rate ceiling (leads a minute)').fill('120');
  await editing.getByRole('button', { name: 'Save campaign' }).click();
  await page.getByText(/120\/min/).first().waitFor();
  await shot(page, 'campaign-edited');

  // Alpha posts a lead through its campaign (Surface B).
  const posted = await fetch(base + '/api/v1/lead', {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ SELLER_CAMPAIGN_KEY: campaignKey, first_name: 'Grace', last_name: 'Hopper', email_address: `grace.${suffix}@example.com`, phone_home: '2125551234', zip_code: '10001' }),
  });
  const alphaLead = (await posted.json()).lead_id;
  assert.ok(alphaLead, `Alpha's lead: ${posted.status}`);

  // An API key: made in the dashboard, used with the API, revoked, then refused.
  await settings('API keys');
  await page.getByLabel('Name').fill(`e2e key ${suffix}`);
  await page.getByRole('button', { name: 'Create key' }).click();
  const apiKey = (await page.locator('#secret-value').textContent()).trim();
  assert.match(apiKey, /^lfk_/);
  // Listed at once, with no reload; the form's scopes are ticked again, so a second key made
  // straight away is accepted too.
  await page.getByRole('row', { name: new RegExp(`e2e key ${suffix}`) }).waitFor();
  const ticked = await page.locator('input[name="scopes"]:checked').count();
  assert.equal(ticked, (await page.locator('input[name="scopes"]').count()) - 1, 'every scope but admin ticked again');
  await page.getByLabel('Name').fill(`e2e second key ${suffix}`);
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('row', { name: new RegExp(`e2e second key ${suffix}`) }).waitFor();
  assert.notEqual((await page.locator('#secret-value').textContent()).trim(), apiKey, 'a second key, shown once');
  await shot(page, 'api-key-once');
  const made = await api('POST', '/v1/leads', lead(2), apiKey);
  assert.ok(made.status === 201 || made.status === 202, `lead with the new key: ${made.status}`);
  const leadId = made.body.lead_id;

  // That lead in Leads, with its attempts.
  await menu('Leads').click();
  // The list names the person, the seller and the buyer (ids on hover), and fits 1280 px with
  // the status and price in view.
  await page.locator(`a[title="${leadId}"]`).waitFor();
  assert.equal((await page.locator(`.lead-list tr:has(a[title="${alphaLead}"]) span[title="${sellerA.seller_id}"]`).textContent()), `Alpha ${suffix}`);
  const fits = await page.evaluate(() => { const w = document.querySelector('.lead-list'); return w.scrollWidth <= w.clientWidth; });
  assert.ok(fits, 'the lead list fits 1280 px');
  assert.ok(await page.getByRole('search', { name: 'Find a lead from any page' }).isVisible(), "the operator's top bar has the search box at 1280 px");
  await shot(page, 'leads-named');
  // The time received, in Kiritimati.
  const created = (await api('GET', `/v1/leads/${leadId}`)).body.data.created_at;
  assert.equal(await page.locator(`.lead-list tr:has(a[title="${leadId}"]) td[data-label="Received"]`).textContent(), inZone(created, zoneName));
  await page.getByText(`Times and days in ${zoneName}`).waitFor();
  // A range of one day (From today To today, Kiritimati's today) holds today's leads; UTC's
  // date, where it is another, is a Kiritimati day already over, without them.
  const day = inZone(Date.now(), zoneName, false);
  const utcDay = new Date().toISOString().slice(0, 10);
  if (utcDay !== day) {
    await page.getByLabel('From', { exact: true }).fill(utcDay);
    await page.getByLabel('To (included)').fill(utcDay);
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(new RegExp(`created_to=${utcDay}`));
    await page.getByText('No lead matches these filters.').waitFor();
  }
  await page.getByLabel('From', { exact: true }).fill(day);
  await page.getByLabel('To (included)').fill(day);
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.locator(`a[title="${leadId}"]`).waitFor();
  await shot(page, 'leads-one-day');
  // Filters that match nothing say so and how to clear them.
  await page.goto(base + '/leads?vertical=no_such_vertical');
  await page.getByText('No lead matches these filters.').waitFor();
  // While the list loads: "Loading…"; when the network fails: what happened and Try again.
  await page.route('**/v1/leads?**', async (route) => { await new Promise((r) => setTimeout(r, 1500)); await route.continue(); });
  await page.goto(base + '/leads');
  await page.getByRole('status').filter({ hasText: 'Loading…' }).waitFor();
  await shot(page, 'leads-loading');
  await page.locator(`a[title="${leadId}"]`).waitFor();
  await page.unroute('**/v1/leads?**');
  await page.route('**/v1/leads?**', (route) => route.abort());
  await page.goto(base + '/leads');
  await page.getByText('Could not reach the server').waitFor();
  assert.equal(await page.getByText('Failed to fetch').count(), 0);
  await shot(page, 'leads-network-error');
  await page.unroute('**/v1/leads?**');
  await page.getByRole('button', { name: 'Try again' }).click();
  await page.locator(`a[title="${leadId}"]`).click();
  await page.getByRole('heading', { name: 'Timeline' }).waitFor();
  for (let i = 0; i < 50 && !(await page.locator(`td [title="${buyerId}"]`).count()); i++) {
    await page.waitForTimeout(200);
    await page.reload();
  }
  assert.ok(await page.getByRole('cell', { name: 'ping', exact: true }).count(), 'the ping is on the timeline');
  assert.ok(await page.getByRole('cell', { name: 'post', exact: true }).count(), 'the post is on the timeline');
  await shot(page, 'lead-timeline');

  await settings('API keys');
  await page.getByRole('button', { name: `Revoke e2e key ${suffix}` }).click();
  await page.getByRole('row', { name: new RegExp(`e2e key ${suffix}`) }).getByText(/^revoked \d/).waitFor();
  await shot(page, 'api-key-revoked');
  // Users name their seller (its id on hover).
  await settings('Users');
  await page.locator(`span[title="${sellerA.seller_id}"]`).first().waitFor();
  assert.equal(await page.locator(`span[title="${sellerA.seller_id}"]`).first().textContent(), `Alpha ${suffix}`);
  await shot(page, 'users');
  assert.equal((await api('GET', '/v1/leads', undefined, apiKey)).status, 401);

  // Reports draw their charts; the CSV is offered.
  await menu('Reports').click();
  await page.locator('svg.chart-line path.line').waitFor();
  assert.ok(await page.locator('svg.chart-line circle.dot').count() >= 1);
  await shot(page, 'report-performance');
  // 30 days at 1280 px: the day labels thinned so none overlaps.
  // The user's days (Kiritimati's, 10 to 14 hours ahead of UTC's): UTC's date would leave out
  // the leads of the walk once Kiritimati is past its midnight.
  await page.goto(base + `/reports?from=${inZone(Date.now() - 29 * 86400000, zoneName, false)}&to=${inZone(Date.now(), zoneName, false)}`);
  await page.locator('svg.chart-line path.line').waitFor();
  await assertLabelsApart(page, '30 days at 1280 px');
  await shot(page, 'report-30-days');
  await page.goto(base + '/reports?kind=revenue&group_by=buyer');
  await page.locator('svg.chart-bar rect.bar').first().waitFor();
  const csv = await page.evaluate(async (href) => (await fetch(href)).text(), await page.locator('#csv').getAttribute('href'));
  assert.match(csv.split('\n')[0], /revenue/);
  // The download is named after the report and its days.
  const [download] = await Promise.all([page.waitForEvent('download'), page.locator('#csv').click()]);
  assert.match(download.suggestedFilename(), /^revenue_\d{4}-\d{2}-\d{2}_\d{4}-\d{2}-\d{2}\.csv$/);
  await download.delete();
  await shot(page, 'report-revenue-by-buyer');
  // Why leads went unsold, chosen from the form: by reason, with what was counted.
  await page.getByLabel('Report', { exact: true }).selectOption('unsold');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.getByRole('heading', { name: 'Unsold report' }).waitFor();
  await page.getByText('Each unsold lead counts once, by how far its auction got.').waitFor();
  assert.equal(await page.getByRole('columnheader', { name: 'reason' }).count(), 1);
  const unsoldApi = await page.evaluate(async (href) => (await fetch(href)).json(), page.url().replace('/reports?', '/v1/reports/unsold?').replace(/kind=unsold&?/, ''));
  assert.ok(await page.getByRole('cell', { name: new Intl.NumberFormat('en-US').format(unsoldApi.data.totals.leads), exact: true }).count() >= 1, 'the total is the API\'s');
  await shot(page, 'report-unsold');

  // Readable at 375 px.
  // The overview's chart drawn at 1280 px is drawn again when the window narrows to a phone's.
  await page.goto(base + '/');
  await page.locator('svg.chart-line path.line').waitFor();
  await page.locator('svg.chart-line').evaluate((svg) => svg.setAttribute('data-drawn-wide', ''));
  await page.setViewportSize({ width: 375, height: 800 });
  await page.locator('svg.chart-line:not([data-drawn-wide]) path.line').waitFor();
  await assertLabelsApart(page, 'the week at 375 px');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll on the overview at 375 px');
  await shot(page, 'overview-375px');
  await page.goto(base + '/settings/time-zone');
  await page.getByRole('heading', { name: 'Time zone' }).waitFor();
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'the time zone page fits 375 px');
  await shot(page, 'time-zone-375px');
  // The lead list as cards: nothing hidden, the status and the price in view.
  await page.goto(base + '/leads');
  const card = page.locator(`.lead-list tr:has(a[title="${leadId}"])`);
  await card.waitFor();
  for (const label of ['Status', 'Price', 'Seller', 'Buyer', 'Received']) {
    const box = await card.locator(`td[data-label="${label}"]`).boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `${label} is on the card at 375 px`);
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll at 375 px');
  await shot(page, 'leads-375px');
  await page.goto(base + '/settings/api-keys');
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await shot(page, 'api-keys-375px');
  await page.goto(base + '/settings/users');
  await page.getByRole('heading', { name: 'Users' }).waitFor();
  await shot(page, 'users-375px');
  await page.goto(base + `/leads/${leadId}`);
  await page.getByRole('heading', { name: 'Timeline' }).waitFor();
  await shot(page, 'lead-375px');
  await page.goto(base + `/change-log?q=${encodeURIComponent(`E2E Buyer ${suffix}`)}`);
  const changeCard = page.locator('.change-list tbody tr').first();
  await changeCard.waitFor();
  for (const label of ['When', 'Who', 'What', 'Change']) {
    const box = await changeCard.locator(`td[data-label="${label}"]`).boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `${label} is on the change's card at 375 px`);
  }
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll in the change log at 375 px');
  await shot(page, 'change-log-375px');
  await page.setViewportSize({ width: 1280, height: 800 });

  // Log out: the session is gone.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
  assert.equal(await page.evaluate(async () => (await fetch('/v1/session')).status), 401);
  await shot(page, 'signed-out');

  // A seller user sees its own leads only, and no operator pages.
  await signIn(alpha);
  // Its overview shows its own payout today (the reports' figure), never the buyers' revenue.
  const today = new Date().toISOString().slice(0, 10);
  const own = await page.evaluate(async (q) => (await fetch(q)).json(), `/v1/reports/revenue?from=${today}&to=${today}&group_by=day`);
  assert.equal(own.data.totals.revenue, undefined, 'a seller reads no revenue');
  assert.equal(typeof own.data.totals.payout, 'number');
  const payoutTile = page.locator('#tile-payout .tile-value');
  await payoutTile.waitFor();
  assert.equal(await payoutTile.textContent(), '$' + own.data.totals.payout.toFixed(2).replace(/\B(?=(\d{3})+(?!\d))/g, ','));
  assert.equal(await page.locator('#tile-revenue').count(), 0, 'no revenue tile for a seller');
  await shot(page, 'seller-overview');
  // The overview's range, for Alpha in Kiritimati too (set through the API with the session's
  // CSRF token): today there, then 7 days, each figure beside the period before's (the reports'
  // totals in the same zone); then a custom range; at 375 px, 30 days.
  const csrf = (await page.evaluate(async () => (await fetch('/v1/session')).json())).csrf_token;
  assert.equal(await page.evaluate(async ([token, tz]) => (await fetch('/v1/session/time-zone', { method: 'PUT', headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': token }, body: JSON.stringify({ time_zone: tz }) })).status, [csrf, zoneName]), 200);
  const zoneToday = inZone(Date.now(), zoneName, false);
  const totals = async (from, to) => (await page.evaluate(async (q) => (await fetch(q)).json(), `/v1/reports/performance?from=${from}&to=${to}&group_by=day&tz=${encodeURIComponent(zoneName)}`)).data.totals;
  await page.reload();
  await page.getByText(`Today, ${zoneToday} (days in ${zoneName})`).waitFor();
  await page.getByRole('button', { name: '7 days' }).click();
  await page.waitForURL(/\?range=7d/);
  await page.getByText('Previous 7 days:').first().waitFor();
  assert.equal(await page.getByRole('button', { name: '7 days' }).getAttribute('aria-pressed'), 'true');
  const week = await totals(addDays(zoneToday, -6), zoneToday);
  const weekBefore = await totals(addDays(zoneToday, -13), addDays(zoneToday, -7));
  assert.equal(await page.locator('#tile-leads .tile-value').textContent(), String(week.leads ?? 0));
  assert.equal(await page.locator('#tile-leads .tile-before-value').textContent(), String(weekBefore.leads ?? 0));
  await page.locator('svg.chart-line path.line').waitFor();
  await shot(page, 'overview-7-days');
  await page.getByLabel('From', { exact: true }).fill(addDays(zoneToday, -2));
  await page.getByLabel('To (included)').fill(zoneToday);
  await page.getByRole('button', { name: 'Custom range' }).click();
  await page.waitForURL(/range=custom/);
  await page.getByText('Previous 3 days:').first().waitFor();
  await page.getByText(`From ${addDays(zoneToday, -2)} to ${zoneToday}`).waitFor();
  await shot(page, 'overview-custom-range');
  await page.setViewportSize({ width: 375, height: 800 });
  await page.getByRole('button', { name: '30 days' }).click();
  await page.getByText('Previous 30 days:').first().waitFor();
  await page.locator('svg.chart-line path.line').waitFor();
  await assertLabelsApart(page, '30 days at 375 px');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'the range picker fits 375 px');
  await shot(page, 'overview-30-days-375px');
  await page.setViewportSize({ width: 1280, height: 800 });

  await menu('Leads').click();
  await page.locator(`a[title="${alphaLead}"]`).waitFor();
  assert.equal(await page.locator(`a[title="${betaLead}"]`).count(), 0, "Beta's lead is not Alpha's to see");
  assert.equal(await page.locator(`a[title="${leadId}"]`).count(), 0, "the operator's lead is not Alpha's to see");
  // Search: Alpha's lead found from the top bar by its e-mail as a person types it, then in
  // Leads by its phone and by its id; Beta's lead, by its id, is simply not found; a text that
  // is no id, e-mail or phone is refused under the box.
  const top = page.getByRole('search', { name: 'Find a lead from any page' });
  await top.getByLabel('Lead search').fill(`  GRACE.${suffix}@Example.COM `);
  await top.getByLabel('Lead search').press('Enter');
  await page.waitForURL(/\/leads\?q=GRACE/);
  await page.locator(`a[title="${alphaLead}"]`).waitFor();
  assert.equal(await page.locator('.lead-list tbody tr').count(), 1, 'the e-mail finds its one lead');
  await shot(page, 'leads-search');
  const finder = page.getByRole('search', { name: 'Find a lead', exact: true });
  const find = async (text) => {
    await finder.getByLabel('Find a lead').fill(text);
    await finder.getByRole('button', { name: 'Find', exact: true }).click();
  };
  await find('(212) 555-1234');
  await page.waitForURL(/q=%28212/);
  await page.locator(`a[title="${alphaLead}"]`).waitFor();
  await find(alphaLead);
  await page.waitForURL(/q=ld_/);
  await page.locator(`a[title="${alphaLead}"]`).waitFor();
  await find(betaLead);
  await page.getByText('No lead matches').waitFor();
  assert.equal(await page.locator(`a[title="${betaLead}"]`).count(), 0, "Beta's lead is not found by Alpha");
  await shot(page, 'leads-search-none');
  await find('jane');
  await page.getByText('must be a lead id, an e-mail address or a phone').waitFor();
  assert.equal(await finder.getByLabel('Find a lead').getAttribute('aria-invalid'), 'true');
  await menu('Leads').click();
  await page.locator(`a[title="${alphaLead}"]`).waitFor();
  // No other party's id or name: no seller or buyer column for a seller.
  assert.equal(await page.locator(`.lead-list [title="${buyerId}"]`).count(), 0, 'a seller is not told its buyers');
  assert.equal(await menu('Buyers').count(), 0);
  assert.equal(await menu('Users').count(), 0);
  assert.equal(await menu('Change log').count(), 0);
  // Nor the change log through the API: it is the operator's, as the other operator routes.
  assert.equal(await page.evaluate(async () => (await fetch('/v1/audit')).status), 403);
  assert.equal(await menu('API keys').count(), 0, 'the settings are in one menu');
  await menu('Settings').click();
  await page.locator('.settings-list').getByRole('link', { name: 'Time zone' }).waitFor();
  assert.equal(await page.locator('.settings-list').getByRole('link', { name: 'Users' }).count(), 0, 'no Users for a seller');
  await shot(page, 'seller-settings');
  await menu('Leads').click();
  await page.locator(`a[title="${alphaLead}"]`).waitFor();
  await shot(page, 'seller-leads');

  // Settings, then API Keys: the seller makes its own key (shown once), which posts as Alpha;
  // the list holds Alpha's keys only.
  await settings('API keys');
  assert.equal(await page.getByLabel('Plan').count(), 0, 'the operator sets plans');
  await page.getByLabel('Name').fill(`alpha key ${suffix}`);
  await page.getByRole('button', { name: 'Create key' }).click();
  const alphaKey = (await page.locator('#secret-value').textContent()).trim();
  assert.match(alphaKey, /^lfk_/);
  const byAlpha = await api('POST', '/v1/leads', lead(3), alphaKey);
  assert.ok(byAlpha.status === 201 || byAlpha.status === 202, `lead with Alpha's key: ${byAlpha.status}`);
  await page.goto(base + '/settings/api-keys');
  await page.getByRole('row', { name: new RegExp(`alpha key ${suffix}`) }).waitFor();
  assert.equal(await page.getByRole('row', { name: /beta|e2e key/ }).count(), 0, "no other account's keys");
  await shot(page, 'seller-api-keys');
  await menu('Campaigns').click();
  await page.getByText(new RegExp(`Alpha web ${suffix}|operator only`)).first().waitFor();
  assert.equal(await page.getByRole('button', { name: 'Create campaign' }).count(), 0);
  await shot(page, 'seller-campaigns');

  // The campaign's specification, for the seller's developers: its fields, a curl command to
  // copy, the answers to expect; never the key itself. Readable at 375 px too.
  await page.getByRole('link', { name: new RegExp(`Specification of Alpha web ${suffix}`) }).click();
  await page.getByRole('heading', { name: new RegExp(`Specification: Alpha web ${suffix}`) }).waitFor();
  await page.getByRole('cell', { name: 'email_address' }).waitFor();
  assert.ok(await page.getByText('YOUR_CAMPAIGN_KEY').count() > 0, 'the example leaves a place for the key');
  assert.equal((await page.content()).includes(campaignKey), false, 'the specification never shows the key');
  for (const status of ['200', '202', '400', '429', '401', '503'])
    assert.ok(await page.locator('#spec-answers h3', { hasText: new RegExp(`^${status}:`) }).count() > 0, `an example answer ${status}`);
  const [doc] = await Promise.all([page.waitForEvent('download'), page.locator('#spec-download').click()]);
  assert.match(doc.suggestedFilename(), /^alpha-web-.*-specification\.md$/);
  await shot(page, 'seller-campaign-specification');
  await page.setViewportSize({ width: 375, height: 800 });
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 375), 'no sideways scroll at 375 px');
  await shot(page, 'seller-campaign-specification-375px');
  await page.setViewportSize({ width: 1280, height: 800 });

  // The seller changes its password, then signs in with it.
  await settings('Password');
  await page.getByLabel('Current password').fill(alpha.password);
  await page.getByLabel('New password', { exact: true }).fill('alpha new password 2');
  await page.getByLabel('New password, again').fill('alpha new password 2');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed').waitFor();
  await shot(page, 'password-changed');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
  await signIn({ email: alpha.email, password: 'alpha new password 2' });

  // Two-factor sign-in: the QR code drawn in the page, the secret, a first code computed here,
  // the recovery codes shown once; then the sign-in asks for a code after the password.
  await settings('Two-factor');
  await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
  await page.getByRole('img', { name: 'QR code of the two-factor secret' }).waitFor();
  const secret = (await page.locator('#two-factor-secret').textContent()).trim();
  assert.match(secret, /^([A-Z2-7]{4} ){7}[A-Z2-7]{4}$/);
  const confirmedAt = nowStep();
  await page.getByLabel('Code from the app').fill(totp(secret, confirmedAt));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.locator('#recovery-codes li').nth(9).waitFor();
  assert.equal(await page.locator('#recovery-codes li').count(), 10);
  await shot(page, 'two-factor-enrolled');
  await page.getByRole('button', { name: 'Done' }).click();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByLabel('E-mail').fill(alpha.email);
  await page.getByLabel('Password').fill('alpha new password 2');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in' }).waitFor();
  const valid = [-1, 0, 1, 2].map((d) => totp(secret, nowStep() + d));
  await page.getByLabel('Code from your authenticator app').fill(['000000', '111111', '222222'].find((c) => !valid.includes(c)));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByText('wrong or already used code').waitFor();
  // The confirmation's step is spent; the next one is within the allowed drift.
  await page.getByLabel('Code from your authenticator app').fill(totp(secret, confirmedAt + 1));
  await page.getByRole('button', { name: 'Verify' }).click();
  await page.getByRole('heading', { name: 'Overview' }).waitFor();
  await shot(page, 'two-factor-signed-in');
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();

  // A buyer user reads its own purchases: its spend, its sources as codes, never a seller's id,
  // a payout or the unsold report.
  const bo = { email: `bo-${suffix}@example.com`, password: 'buyer user password' };
  assert.equal((await api('POST', '/v1/users', { email: bo.email, name: 'Bo Buyer', password: bo.password, account: 'buyer', buyer_id: buyerId })).status, 201);
  await signIn(bo);
  await page.locator('#tile-spend').waitFor();
  assert.equal(await page.locator('#tile-revenue').count(), 0, 'no revenue tile for a buyer');
  await page.goto(base + '/reports?kind=revenue&group_by=seller');
  await page.getByRole('columnheader', { name: 'source code' }).waitFor();
  const kinds = page.getByLabel('Report', { exact: true });
  assert.equal(await kinds.locator('option[value="revenue"]').count(), 1);
  assert.equal(await kinds.locator('option[value="unsold"]').count(), 0, 'no unsold report for a buyer');
  const boCsv = await page.evaluate(async (href) => (await fetch(href)).text(), await page.locator('#csv').getAttribute('href'));
  assert.equal(boCsv.split('\r\n')[0], 'source_code,leads_sold,revenue,avg_price,gross_revenue,returns,returned_revenue,aged_sales,aged_revenue,aged_returns,aged_returned_revenue,aged_net_revenue');
  assert.ok(!boCsv.includes(sellerA.seller_id) && !boCsv.includes(sellerB.seller_id), 'no seller id in a buyer\'s CSV');
  await shot(page, 'buyer-report-by-source');
  // Its purchases: the price in view at 1280 px, and as cards at 375 px.
  await menu('Leads').click();
  const bought = page.locator(`.lead-list tr:has(a[title="${leadId}"])`);
  await bought.waitFor();
  assert.equal(await bought.locator('td[data-label="Price"]').textContent(), '$12.50');
  assert.equal(await page.locator(`.lead-list [title="${sellerA.seller_id}"], .lead-list [title="${sellerB.seller_id}"]`).count(), 0, 'no seller id for a buyer');
  await shot(page, 'buyer-leads');
  await page.setViewportSize({ width: 375, height: 800 });
  await page.reload();
  await bought.waitFor();
  const priceBox = await bought.locator('td[data-label="Price"]').boundingBox();
  assert.ok(priceBox && priceBox.x + priceBox.width <= 375, 'the price is on the card at 375 px');
  await shot(page, 'buyer-leads-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();

  // A new seller with no lead is told what to do first, on the overview and in Leads.
  const gammaSeller = (await api('POST', '/v1/sellers', { name: `Gamma ${suffix}` })).body.data;
  const gamma = { email: `gamma-${suffix}@example.com`, password: 'gamma seller password' };
  assert.equal((await api('POST', '/v1/users', { email: gamma.email, name: 'Gil Gamma', password: gamma.password, account: 'seller', seller_id: gammaSeller.seller_id })).status, 201);
  await signIn(gamma);
  await page.getByText('No leads yet').waitFor();
  await shot(page, 'new-seller-overview');
  await menu('Leads').click();
  await page.getByRole('link', { name: 'make an API key' }).click();
  await page.getByRole('heading', { name: 'API keys' }).waitFor();
  await page.getByText('No API key yet').waitFor();
  await shot(page, 'new-seller-api-keys');
  await page.setViewportSize({ width: 375, height: 800 });
  await menu('Leads').click();
  await page.getByText('No leads yet').waitFor();
  await shot(page, 'new-seller-leads-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
});
