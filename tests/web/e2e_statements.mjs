// Statements and closed periods in the dashboard (docs/statements.md): a buyer user reads its
// invoice for the month (its purchases at its price and a return, no seller and no payout) and
// prints it (the print stylesheet leaves the statement alone; a PDF is made as the browser's
// "Save as PDF" would); a seller user reads its payout statement (no buyer, no price); the
// operator closes last month on the Periods page after confirming, reads its statement as
// final, and reads the buyer's month with the margin; then sets the seller's time zone to New
// York on the campaigns page, and its statement is cut there; the Statements and Periods pages
// at 375 px. Started by tests/web/e2e.sh with its own leadflow-ingest and buyer simulator.
import assert from 'node:assert/strict';
import { api, base, buyerUrl, lead, openBrowser, shot, shots, suffix } from './e2e_lib.mjs';

const seller = (await api('POST', '/v1/sellers', { name: `Statement Seller ${suffix}` })).body.data;
const sellerKey = (await api('POST', '/v1/api-keys', { name: 'seller', seller_id: seller.seller_id })).body.data.key;
const made = await api('POST', '/v1/buyers', {
  name: `Invoiced Buyer ${suffix}`,
  verticals: ['auto_insurance'],
  delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post` },
  return_window_days: 30,
});
assert.equal(made.status, 201, JSON.stringify(made.body));
const buyerId = made.body.data.buyer_id;
const buyerKey = (await api('POST', '/v1/api-keys', { name: 'buyer', buyer_id: buyerId })).body.data.key;
const leads = [];
for (let n = 1; n <= 3; n++) {
  const r = await api('POST', '/v1/leads', lead(n), sellerKey);
  assert.equal(r.status, 201, JSON.stringify(r.body));
  assert.equal(r.body.distribution.accepted, true, "sold to the walk's buyer");
  leads.push(r.body.lead_id);
}
const back = await api('POST', `/v1/leads/${leads[0]}/return`, { reason: 'invalid_phone' }, buyerKey);
assert.equal(back.status, 201, JSON.stringify(back.body));
const users = {
  buyer: { email: `bill-${suffix}@example.com`, password: 'buyer statement pw', account: 'buyer', buyer_id: buyerId },
  seller: { email: `sue-${suffix}@example.com`, password: 'seller statement pw', account: 'seller', seller_id: seller.seller_id },
  operator: { email: `olga-${suffix}@example.com`, password: 'operator statement pw', account: 'operator' },
};
for (const [name, u] of Object.entries(users)) {
  const r = await api('POST', '/v1/users', { ...u, name: `${name} ${suffix}` });
  assert.equal(r.status, 201, JSON.stringify(r.body));
}
// This month, and the newest month the operator may close, as the API names them (UTC): a
// month has ended everywhere twelve hours after it ends in UTC, so in a month's first twelve
// hours that is the month before last.
const now = new Date();
const month = now.toISOString().slice(0, 7);
const ended = new Date(now.getTime() - 12 * 3600 * 1000);
const last = new Date(Date.UTC(ended.getUTCFullYear(), ended.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);

const { page, menu, settled, signIn, run } = await openBrowser();
const signOut = async () => {
  await page.locator('#sign-out').click();
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
};
const statementText = async () => page.locator('#statement').innerText();

await run(async () => {
  // The buyer's invoice for this month: three purchases and a return.
  await signIn(users.buyer);
  await menu('Statements').click();
  await settled();
  await page.getByLabel('Period', { exact: true }).selectOption(month);
  await page.waitForURL(new RegExp(`period=${month}`));
  await settled();
  await page.getByRole('heading', { name: `Invoice · ${month}` }).waitFor();
  const invoice = await statementText();
  assert.match(invoice, /Open: the period is not closed/);
  assert.match(invoice, /Purchases/);
  assert.match(invoice, /Total due/);
  assert.ok(!/payout|margin/i.test(invoice), 'a buyer reads no payout and no margin');
  assert.ok(!invoice.includes(seller.seller_id) && !invoice.includes(seller.name), 'a buyer reads no seller');
  assert.equal(await page.locator('#statement tbody tr').count(), 4 + 4, 'four totals and four lines');
  await shot(page, 'buyer-invoice');
  // Printed: the statement alone, black on white.
  await page.emulateMedia({ media: 'print' });
  assert.equal(await page.locator('header.topbar').isVisible(), false, 'no menu on paper');
  assert.equal(await page.locator('#statement-choice').isVisible(), false, 'no choices on paper');
  assert.equal(await page.locator('#print-statement').isVisible(), false, 'no buttons on paper');
  await shot(page, 'buyer-invoice-print');
  await page.pdf({ path: `${shots}/buyer-invoice.pdf`, format: 'A4', printBackground: true });
  await page.emulateMedia({ media: 'screen' });
  // The CSV link is the API's, for this buyer and month.
  assert.equal(await page.locator('#statement-csv').getAttribute('href'), `/v1/statements?period=${month}&format=csv`);
  await signOut();

  // The seller's payout statement: payouts, never a buyer or a price.
  await signIn(users.seller);
  await page.goto(`${base}/statements?period=${month}`);
  await settled();
  await page.getByRole('heading', { name: `Payout statement · ${month}` }).waitFor();
  const payouts = await statementText();
  assert.match(payouts, /Total payout/);
  assert.match(payouts, /Reversals/);
  assert.ok(!payouts.includes(buyerId) && !payouts.includes(`Invoiced Buyer ${suffix}`), 'a seller reads no buyer');
  assert.ok(!/Amount|margin|Total due/i.test(payouts), 'a seller reads no price and no margin');
  await shot(page, 'seller-payout-statement');
  await signOut();

  // The operator closes last month, after confirming.
  await signIn(users.operator);
  await menu('Periods').click();
  await settled();
  const close = page.locator(`#close-${last}`);
  await close.click();
  await page.getByText(`Close ${last} for good?`).waitFor();
  await shot(page, 'periods-confirm-close');
  await page.locator(`#confirm-close-${last}`).click();
  await page.waitForURL(new RegExp(`closed=${last}`));
  await settled();
  await page.getByText(`${last} is closed: its statements are final.`).waitFor();
  const row = page.getByRole('row', { name: new RegExp(`^${last}`) });
  assert.match(await row.innerText(), /Closed/);
  await shot(page, 'periods-closed');
  const closes = (await api('GET', '/v1/periods')).body.data;
  assert.equal(closes.find((p) => p.period === last).status, 'closed');
  assert.equal((await api('POST', `/v1/periods/${last}/close`, {})).status, 409, 'closed once');

  // Its statement is final; the buyer's month reads with the margin.
  await page.goto(`${base}/statements?period=${last}&party=buyer&id=${buyerId}`);
  await settled();
  assert.match(await statementText(), /Final: the period was closed on/);
  await shot(page, 'operator-closed-statement');
  await page.goto(`${base}/statements?period=${month}&party=buyer&id=${buyerId}`);
  await settled();
  const seen = await statementText();
  assert.match(seen, /Margin/);
  // Each line names the seller (its id only on hover).
  assert.ok(seen.includes(seller.name) && !seen.includes(seller.seller_id), seen);
  await shot(page, 'operator-buyer-statement');

  // The seller's time zone, set on the campaigns page's Sellers card: its payout statement is
  // then cut in New York's zone; a zone the server does not know is refused at the field.
  await menu('Campaigns').click();
  await settled();
  await page.getByRole('button', { name: `Change time zone of ${seller.name}` }).click();
  const zone = page.getByRole('combobox', { name: `Time zone of ${seller.name}`, exact: true });
  await zone.selectOption('America/New_York');
  await shot(page, 'seller-zone-form');
  await page.getByRole('button', { name: 'Save time zone' }).click();
  await page.getByRole('row', { name: new RegExp(seller.name) }).getByText('America/New_York').waitFor();
  assert.equal((await api('GET', `/v1/sellers/${seller.seller_id}`)).body.data.time_zone, 'America/New_York');
  const bad = await api('PUT', `/v1/sellers/${seller.seller_id}`, { time_zone: 'Mars/Olympus' });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.errors[0].field, 'time_zone');
  // The lines of this walk fall in New York's month, which in a UTC month's first five hours is
  // the one before.
  const parts = new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', year: 'numeric', month: '2-digit' })
    .formatToParts(now);
  const nyMonth = `${parts.find((p) => p.type === 'year').value}-${parts.find((p) => p.type === 'month').value}`;
  await page.goto(`${base}/statements?period=${nyMonth}&party=seller&id=${seller.seller_id}`);
  await settled();
  assert.match(await statementText(), /\(America\/New_York\)/);
  // The operator reads the other party of each line by its name, not its id.
  const sellerLines = await page.locator('#statement section[aria-label="Lines"]').innerText();
  assert.ok(sellerLines.includes(`Invoiced Buyer ${suffix}`), sellerLines);
  assert.ok(!sellerLines.includes(buyerId), sellerLines);
  await shot(page, 'operator-seller-statement-new-york');

  // Both pages at 375 px: no sideways scroll of the page, and nothing hidden in a table's own
  // box either (the lines and the periods become cards: every cell within the screen).
  await page.setViewportSize({ width: 375, height: 800 });
  const fits = () =>
    page.evaluate(
      () =>
        document.documentElement.scrollWidth <= 375 &&
        [...document.querySelectorAll('.phone-cards')].every((box) => box.scrollWidth <= box.clientWidth + 1) &&
        [...document.querySelectorAll('.phone-cards td')].every((td) => td.getBoundingClientRect().right <= 375 + 0.5),
    );
  assert.ok(await fits(), 'the statement fits 375 px');
  await shot(page, 'operator-seller-statement-375px');
  await page.goto(`${base}/periods`);
  await settled();
  assert.ok(await fits(), 'the periods fit 375 px');
  await shot(page, 'periods-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  await signOut();
  await signIn(users.seller);
  await page.goto(`${base}/statements?period=${month}`);
  await settled();
  await page.setViewportSize({ width: 375, height: 800 });
  assert.match(await statementText(), /\(America\/New_York\)/);
  assert.ok(await fits(), "the seller's statement fits 375 px");
  await shot(page, 'seller-payout-statement-375px');
});
