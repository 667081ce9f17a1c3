// The operator's ledger journal in the dashboard (docs/dashboard.md, "Ledger"): two buyers (one
// per vertical) buy leads of one seller, one returns one; the operator opens Ledger from the
// menu, reads every entry with names rather than ids, filters by one buyer (kept in the
// address), reads only that buyer's sales and its return, pages through them one at a time,
// follows an entry to its lead, and the "Download CSV" link is the API's for the same filters
// and downloads those entries. A seller and a buyer have no Ledger in their menu, and the page
// is refused to them. The page at 375 px. Started by tests/web/e2e.sh with its own
// leadflow-ingest and buyer simulator.
import assert from 'node:assert/strict';
import { api, base, buyerUrl, lead, openBrowser, shot, suffix } from './e2e_lib.mjs';

const seller = (await api('POST', '/v1/sellers', { name: `Ledger Seller ${suffix}` })).body.data;
const sellerKey = (await api('POST', '/v1/api-keys', { name: 'seller', seller_id: seller.seller_id })).body.data.key;
const buyer = async (name, vertical) => {
  const made = await api('POST', '/v1/buyers', {
    name: `${name} ${suffix}`,
    verticals: [vertical],
    delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post` },
    return_window_days: 30,
  });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  return made.body.data.buyer_id;
};
const autoBuyer = await buyer('Auto Buyer', 'auto_insurance');
const solarBuyer = await buyer('Solar Buyer', 'solar');
const autoKey = (await api('POST', '/v1/api-keys', { name: 'buyer', buyer_id: autoBuyer })).body.data.key;
const auto = [];
for (let n = 1; n <= 3; n++) {
  const r = await api('POST', '/v1/leads', lead(n), sellerKey);
  assert.equal(r.body.distribution.accepted, true, JSON.stringify(r.body));
  auto.push(r.body.lead_id);
}
const solar = await api('POST', '/v1/leads', lead(9, { vertical: 'solar' }), sellerKey);
assert.equal(solar.body.distribution.accepted, true, JSON.stringify(solar.body));
assert.equal((await api('GET', `/v1/leads/${solar.body.lead_id}`)).body.data.distribution.buyer_id, solarBuyer, 'sold to the solar buyer');
const back = await api('POST', `/v1/leads/${auto[0]}/return`, { reason: 'invalid_phone' }, autoKey);
assert.equal(back.status, 201, JSON.stringify(back.body));
const users = {
  operator: { email: `lena-${suffix}@example.com`, password: 'operator ledger pw', account: 'operator' },
  seller: { email: `sid-${suffix}@example.com`, password: 'seller ledger pw', account: 'seller', seller_id: seller.seller_id },
  buyer: { email: `bea-${suffix}@example.com`, password: 'buyer ledger pw', account: 'buyer', buyer_id: autoBuyer },
};
for (const [name, u] of Object.entries(users)) {
  const r = await api('POST', '/v1/users', { ...u, name: `${name} ${suffix}` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}

const { page, menu, settled, signIn, run } = await openBrowser();
const signOut = async () => {
  await page.locator('#sign-out').click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
};
const rows = () => page.locator('.ledger-list tbody tr');
const rowTexts = async () => (await rows().allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));

await run(async () => {
  await signIn(users.operator);
  await menu('Ledger').click();
  await page.getByRole('heading', { name: 'Ledger', exact: true }).waitFor();
  await settled();
  // Every entry, oldest first: four sales and the return, accounts by name, money as money.
  assert.equal(await rows().count(), 5);
  const all = await rowTexts();
  assert.match(all[0], new RegExp(`Sale ${auto[0]} Auto Buyer ${suffix} Ledger Seller ${suffix}`));
  assert.match(all[0], /\$12\.50/);
  assert.ok(all.some((t) => t.includes(`Solar Buyer ${suffix}`)), 'the solar sale is listed');
  assert.match(all[4], new RegExp(`Return ${auto[0]}`));
  assert.match(all[4], /-\$12\.50/);
  await shot(page, 'ledger');

  // Filtered by the auto buyer: its three sales and its return, the filter in the address.
  await page.getByLabel('Buyer', { exact: true }).selectOption(autoBuyer);
  await page.getByLabel('Kind', { exact: true }).selectOption('');
  await page.getByRole('button', { name: 'Show' }).click();
  await page.waitForURL(new RegExp(`/ledger\\?buyer_id=${autoBuyer}$`));
  await settled();
  await page.locator('.ledger-list caption', { hasText: '4 entries' }).waitFor();
  const mine = await rowTexts();
  assert.equal(mine.length, 4);
  assert.ok(mine.every((t) => t.includes(`Auto Buyer ${suffix}`) && !t.includes('Solar')), mine.join('\n'));
  assert.equal(await page.getByLabel('Buyer', { exact: true }).inputValue(), autoBuyer, 'the filter is shown as chosen');
  await shot(page, 'ledger-by-buyer');
  // The CSV link: the API's, for the same filters; it downloads those four entries.
  const href = await page.locator('#ledger-csv').getAttribute('href');
  assert.equal(href, `/v1/ledger?buyer_id=${autoBuyer}&format=csv`);
  const csv = await page.evaluate(async (h) => {
    const r = await fetch(h);
    return { status: r.status, type: r.headers.get('content-type'), text: await r.text() };
  }, href);
  assert.equal(csv.status, 200);
  assert.equal(csv.type, 'text/csv; charset=utf-8');
  const lines = csv.text.trim().split('\r\n');
  assert.equal(lines.length, 5, csv.text);
  assert.match(lines[0], /^entry_id,at,kind,lead_id,buyer_id,seller_id/);
  assert.ok(lines.slice(1).every((l) => l.includes(autoBuyer)), csv.text);

  // A page of one at a time, through "Next page", keeping the filter.
  await page.goto(`${base}/ledger?buyer_id=${autoBuyer}&limit=1`);
  await settled();
  const seen = [];
  for (let n = 0; n < 4; n++) {
    assert.equal(await rows().count(), 1);
    seen.push((await rowTexts())[0]);
    const next = page.getByRole('link', { name: 'Next page' });
    if (n < 3) {
      const before = page.url();
      await next.click();
      await page.waitForURL((u) => u.href !== before && u.searchParams.has('cursor'));
      await settled();
      assert.match(page.url(), new RegExp(`buyer_id=${autoBuyer}`));
    } else assert.equal(await next.count(), 0, 'no page after the last');
  }
  assert.equal(new Set(seen).size, 4, 'each page a different entry');
  // An entry's lead is a link to it.
  await page.getByRole('link', { name: 'First page' }).click();
  await settled();
  await page.locator('.ledger-list').getByRole('link', { name: auto[0] }).click();
  await page.waitForURL(new RegExp(`/leads/${auto[0]}$`));

  // At 375 px the entries become cards within the screen.
  await page.goto(`${base}/ledger?buyer_id=${autoBuyer}`);
  await settled();
  await page.setViewportSize({ width: 375, height: 800 });
  const fits = await page.evaluate(
    () =>
      document.documentElement.scrollWidth <= 375 &&
      [...document.querySelectorAll('.phone-cards td')].every((td) => td.getBoundingClientRect().right <= 375 + 0.5),
  );
  assert.ok(fits, 'the ledger fits 375 px');
  await shot(page, 'ledger-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  await signOut();

  // Neither a seller nor a buyer has a Ledger.
  for (const who of [users.seller, users.buyer]) {
    await signIn(who);
    assert.equal(await menu('Ledger').count(), 0, `no Ledger in the ${who.account}'s menu`);
    assert.equal((await page.evaluate(async () => (await fetch('/v1/ledger')).status)), 403);
    await signOut();
  }
});
