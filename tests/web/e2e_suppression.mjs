// Suppression lists end to end: the operator makes a list on its page, uploads a CSV and a lead
// with a listed e-mail is refused at intake (the answer names the field and why); a list made to
// be thrown away is deleted after a confirmation; a buyer uploads its customers as SHA-256 from
// its portal, sees none of the operator's lists, and the next lead of one of its customers is not
// offered to it: the operator reads that buyer `suppressed` under the lead's "Buyers not
// eligible". At 1280 and 375 px, each page scanned by axe-core.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { api, base, buyerUrl, lead, openBrowser, operatorKey, shot, suffix } from './e2e_lib.mjs';

// The world, through the API: a seller posting with its key, two buyers at the walk's simulator.
const seller = (await api('POST', '/v1/sellers', { name: `List Seller ${suffix}` })).body.data;
const sellerKey = (await api('POST', '/v1/api-keys', { name: 'seller', seller_id: seller.seller_id })).body.data.key;
const buyer = async (name, bid) => {
  const r = await api('POST', '/v1/buyers', {
    name,
    verticals: ['auto_insurance'],
    delivery: { mode: 'ping_post', ping_url: `${buyerUrl}/ping`, post_url: `${buyerUrl}/post` },
    pricing: { model: 'bid', min_bid: bid },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.data;
};
const shielded = await buyer(`Shielded Buyer ${suffix}`, 1);
const backup = await buyer(`Backup Buyer ${suffix}`, 1);
const ops = { email: `lists-ops-${suffix}@example.com`, password: 'operator lists password' };
const bea = { email: `lists-bea-${suffix}@example.com`, password: 'buyer lists password' };
assert.equal((await api('POST', '/v1/users', { email: ops.email, name: 'Oona Operator', password: ops.password, account: 'operator' })).status, 201);
assert.equal((await api('POST', '/v1/users', { email: bea.email, name: 'Bea Buyer', password: bea.password, account: 'buyer', buyer_id: shielded.buyer_id })).status, 201);

const listed = lead(1); // on the operator's list
const customer = lead(2); // on the shielded buyer's list, hashed
const sha256 = (s) => createHash('sha256').update(s.trim().toLowerCase()).digest('hex');

const { page, menu, settled, signIn, run } = await openBrowser();
const dialogs = [];
page.on('dialog', (d) => dialogs.push(d.message())); // accepted by openBrowser's own handler
const fits = async (what) => assert.ok((await page.evaluate(() => document.documentElement.scrollWidth)) <= 375, `${what}: nothing wider than 375 px`);
const row = (name) => page.locator('.suppression-lists tr', { hasText: name });
async function uploadTo(name, file, csv) {
  await row(name).locator('input[type=file]').setInputFiles({ name: file, mimeType: 'text/csv', buffer: Buffer.from(csv) });
  await row(name).getByRole('button', { name: new RegExp(`^(Upload|Replace) entries of ${name}$`) }).click();
}
async function signOut() {
  await page.locator('#sign-out').click();
  await page.getByRole('heading', { name: 'Sign in to leadflow' }).waitFor();
}
// The front reads the lists every second: waits until it holds `n` entries in all.
async function holdsEntries(n) {
  for (let i = 0; i < 100; i++) {
    const text = await (await fetch(`${base}/metrics`, { headers: { Authorization: `Bearer ${operatorKey}` } })).text();
    if (text.includes(`\nleadflow_suppression_entries ${n}\n`)) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  throw new Error(`the front never held ${n} suppression entries`);
}

await run(async () => {
  // The operator's page: empty, then a list made for everyone.
  await signIn(ops);
  await menu('Suppression').click();
  await page.getByRole('heading', { name: 'Suppression lists' }).waitFor();
  await settled();
  await page.getByText('No list yet').waitFor();
  await page.getByLabel('Name').fill('Do not contact');
  assert.equal(await page.getByLabel('For', { exact: true }).inputValue(), '', 'everyone by default');
  await page.getByRole('button', { name: 'Create list' }).click();
  await row('Do not contact').waitFor();
  assert.match(await row('Do not contact').innerText(), /Everyone \(refused at intake\)[\s\S]*0[\s\S]*never/);

  // A CSV with a bad line: refused, naming it; then the good file.
  await uploadTo('Do not contact', 'bad.csv', `email,reason\n${listed.email},asked\nnot an address\n`);
  await page.locator('.suppression-status').getByText('line 3 holds no e-mail, phone or SHA-256').waitFor();
  await shot(page, 'operator-upload-refused');
  await uploadTo('Do not contact', 'dnc.csv', `email,reason\n${listed.email.toUpperCase()},asked\n${listed.phone},asked\n`);
  await page.locator('.suppression-status').getByText('“Do not contact” now holds 2 entries.').waitFor();
  assert.match(await row('Do not contact').locator('td[data-label="Entries"]').innerText(), /^2$/);
  assert.doesNotMatch(await row('Do not contact').innerText(), /never/, 'the last upload is shown');
  await shot(page, 'operator-list-uploaded');

  // The seller's lead with that e-mail is refused at intake, and the answer says why.
  await holdsEntries(2);
  const refused = await api('POST', '/v1/leads', listed, sellerKey);
  assert.equal(refused.status, 422, JSON.stringify(refused.body));
  assert.deepEqual(refused.body.errors.map((e) => [e.field, e.code]), [['email', 'suppressed']], JSON.stringify(refused.body));
  assert.ok(/suppression list/i.test(JSON.stringify(refused.body)), JSON.stringify(refused.body));

  // A list deleted after its confirmation.
  await page.getByLabel('Name').fill('Thrown away');
  await page.getByLabel('For', { exact: true }).selectOption({ label: backup.name });
  await page.getByRole('button', { name: 'Create list' }).click();
  await row('Thrown away').getByText(backup.name).waitFor();
  await page.getByRole('button', { name: 'Delete Thrown away' }).click();
  await row('Thrown away').waitFor({ state: 'detached' });
  assert.match(dialogs.at(-1) ?? '', /^Delete the list “Thrown away” and its 0 entries\?/);
  assert.equal((await api('GET', '/v1/suppression-lists')).body.data.length, 1);

  await page.setViewportSize({ width: 375, height: 800 });
  await page.reload();
  await row('Do not contact').waitFor();
  await settled();
  await fits('operator lists');
  await shot(page, 'operator-lists-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  await signOut();

  // The buyer's portal: its own lists only; its customers uploaded as SHA-256.
  await signIn(bea);
  await menu('Suppression').click();
  await page.getByRole('heading', { name: 'Suppression lists' }).waitFor();
  await settled();
  assert.ok(!(await page.locator('main').innerText()).includes('Do not contact'), 'the operator\'s list is not the buyer\'s to see');
  assert.equal(await page.getByLabel('For', { exact: true }).count(), 0, 'a buyer\'s list is its own');
  await page.getByLabel('Name').fill('Existing customers');
  await page.getByRole('button', { name: 'Create list' }).click();
  await row('Existing customers').waitFor();
  await uploadTo('Existing customers', 'customers.csv', `sha256\n${sha256(customer.email)}\n`);
  await page.locator('.suppression-status').getByText('“Existing customers” now holds 1 entry.').waitFor();
  await shot(page, 'buyer-list-uploaded');
  await page.setViewportSize({ width: 375, height: 800 });
  await page.reload();
  await row('Existing customers').waitFor();
  await settled();
  await fits('buyer lists');
  await shot(page, 'buyer-lists-375px');
  await page.setViewportSize({ width: 1280, height: 800 });
  await signOut();

  // The customer's next lead goes to the other buyer; the operator reads why on the lead.
  await holdsEntries(3);
  const posted = await api('POST', '/v1/leads', customer, sellerKey);
  assert.equal(posted.status, 201, JSON.stringify(posted.body));
  const sold = (await api('GET', `/v1/leads/${posted.body.lead_id}`)).body.data;
  assert.ok((sold.ineligible_buyers ?? []).some((b) => b.buyer_id === shielded.buyer_id && b.reason === 'suppressed'), JSON.stringify(sold));
  assert.notEqual(sold.distribution?.buyer_id, shielded.buyer_id, 'not sold to the buyer that listed the person');
  await signIn(ops);
  await page.goto(`${base}/leads/${sold.lead_id}`);
  await page.getByRole('heading', { name: 'Buyers not eligible' }).waitFor();
  const why = page.getByRole('region', { name: 'Why each buyer did not take part' }).locator('tr', { hasText: shielded.name });
  await why.getByText('suppressed', { exact: true }).waitFor();
  await shot(page, 'operator-lead-suppressed');
  await page.setViewportSize({ width: 375, height: 800 });
  await page.reload();
  await page.getByRole('heading', { name: 'Buyers not eligible' }).waitFor();
  await settled();
  await fits('lead page');
  await shot(page, 'operator-lead-suppressed-375px');
});
