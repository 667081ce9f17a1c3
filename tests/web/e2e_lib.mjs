// What the dashboard's end-to-end walks share (tests/web/e2e*.mjs, each started by
// tests/web/e2e.sh with its own leadflow-ingest and buyer simulator): the API called as a client
// would, a lead body, TOTP codes, screenshots with an axe-core scan of each, WCAG contrast, the
// chart's labels kept apart, times in a zone, and a browser opened on the dashboard whose walk
// fails at the end on any serious accessibility violation, script error or CSP violation.
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

export const base = process.env.E2E_BASE;
export const operatorKey = process.env.E2E_OPERATOR_KEY;
export const buyerUrl = process.env.E2E_BUYER_URL;
export const shots = process.env.E2E_SHOTS;
export const suffix = Math.random().toString(36).slice(2, 8);

export async function api(method, path, body, key = operatorKey) {
  const res = await fetch(base + path, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
}
export function lead(n, extra = {}) {
  return { first_name: 'Ada', last_name: `Tester${n}`, email: `ada.${suffix}.${n}@example.com`, phone: `202555${1000 + n}`, zip_code: '90210', vertical: 'auto_insurance', source: 'e2e', ...extra };
}
// TOTP (RFC 6238) of a base32 secret at a 30-second step, computed here as an app would.
export function totp(secret, at) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secret.replace(/\s+/g, '')) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g).map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(at));
  const mac = createHmac('sha1', key).update(counter).digest();
  const o = mac[19] & 15;
  const bin = ((mac[o] & 0x7f) << 24) | (mac[o + 1] << 16) | (mac[o + 2] << 8) | mac[o + 3];
  return String(bin % 1000000).padStart(6, '0');
}
export const nowStep = () => Math.floor(Date.now() / 30000);

let step = 0;
export const stepNow = () => step;
// axe-core scans every page a step shows (run through the DevTools protocol, which the page's
// CSP does not govern); a serious or critical violation fails the walk at the end, all listed.
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const axeFindings = [];
export async function scan(page, name) {
  if ((await page.evaluate(() => typeof window.axe)) === 'undefined') await page.evaluate(axeSource);
  const found = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })));
  for (const v of found) if (v.impact === 'serious' || v.impact === 'critical') axeFindings.push({ page: name, ...v });
}
export async function shot(page, name) {
  step += 1;
  const file = `${shots}/${String(step).padStart(2, '0')}-${name}.png`;
  await page.screenshot({ path: file, fullPage: true });
  await scan(page, name);
  console.log(`e2e: ${name} ok (${file})`);
}
// WCAG's contrast ratio of two CSS colours ("rgb(r, g, b)").
export function contrast(a, b) {
  const lum = (c) => {
    const [r, g, bl] = c.match(/\d+(\.\d+)?/g).slice(0, 3).map((v) => Number(v) / 255).map((v) => (v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4));
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
// The x-axis labels of the line chart on the page: none may overlap another.
export async function assertLabelsApart(page, what) {
  const boxes = await page.evaluate(() => {
    const svg = document.querySelector('svg.chart-line');
    const g = svg.querySelector('g');
    const plotBottom = Math.max(...[...g.querySelectorAll('line.grid')].map((l) => l.getBoundingClientRect().bottom));
    return [...g.querySelectorAll('text.tick')].map((t) => t.getBoundingClientRect()).filter((r) => r.top >= plotBottom - 1).map((r) => [r.left, r.right]).sort((a, b) => a[0] - b[0]);
  });
  assert.ok(boxes.length >= 2, `${what}: the x labels are drawn`);
  for (let i = 1; i < boxes.length; i++) assert.ok(boxes[i - 1][1] <= boxes[i][0], `${what}: x labels ${i - 1} and ${i} overlap (${boxes[i - 1]} / ${boxes[i]})`);
}
// A date or a time as the dashboard writes it in `tz`.
export function inZone(t, tz, withTime = true) {
  const p = Object.fromEntries(new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' }).formatToParts(new Date(t)).map((x) => [x.type, x.value]));
  return withTime ? `${p.year}-${p.month}-${p.day} ${p.hour}:${p.minute}:${p.second}` : `${p.year}-${p.month}-${p.day}`;
}
export const addDays = (day, n) => new Date(Date.parse(`${day}T00:00:00Z`) + n * 86400000).toISOString().slice(0, 10);

// A browser on the dashboard at 1280 × 800 in `timezoneId`, with what a walk does on it: a page
// of the main menu, a page under Settings, signing in. `run(body)` runs the walk's steps, then
// fails on any serious or critical axe finding and on any console error but the refusals the
// steps ask for (failed loads of 4xx answers), saving failure.png when a step fails.
export async function openBrowser({ timezoneId = 'UTC' } = {}) {
  const browser = await chromium.launch({ executablePath: process.env.E2E_CHROMIUM, args: ['--no-sandbox'] });
  const context = await browser.newContext({ ignoreHTTPSErrors: true, viewport: { width: 1280, height: 800 }, timezoneId });
  const page = await context.newPage();
  const consoleErrors = [];
  page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
  page.on('pageerror', (e) => consoleErrors.push(String(e)));
  page.on('dialog', (d) => d.accept());
  const menu = (name) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name, exact: true });
  async function settings(name) {
    await menu('Settings').click();
    await page.getByRole('heading', { name: 'Settings', exact: true }).waitFor();
    await page.locator('.settings-list').getByRole('link', { name, exact: true }).click();
  }
  async function signIn(who) {
    await page.goto(base + '/');
    await page.getByLabel('E-mail').fill(who.email);
    await page.getByLabel('Password').fill(who.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
  }
  // The page is drawn: the shell is up (after a full load it first asks /v1/session, before any
  // "Loading…" exists) and the page's "Loading…" is gone.
  const settled = () =>
    page.waitForFunction(() => document.querySelector('main#main') !== null && document.querySelector('.page-status') === null);
  async function run(body) {
    try {
      await body();
      if (axeFindings.length) console.error(JSON.stringify(axeFindings, null, 1));
      assert.deepEqual(axeFindings.map((f) => `${f.page}: ${f.id} (${f.impact})`), [], 'no serious or critical accessibility violation (axe-core)');
      // Refusals the steps ask for (a wrong password, an invalid buyer, a 401 before sign-in, a
      // network failure made on purpose) are logged by the browser as failed loads; anything
      // else (a script error, a CSP violation) fails.
      assert.deepEqual(consoleErrors.filter((e) => !/the server responded with a status of 4\d\d|net::ERR_FAILED/.test(e)), [], 'no script errors and no CSP violations');
      console.log('e2e: all steps passed');
    } catch (e) {
      await page.screenshot({ path: `${shots}/failure.png`, fullPage: true }).catch(() => {});
      console.error(`e2e: failed after step ${step}; see ${shots}/failure.png`);
      throw e;
    } finally {
      await browser.close();
    }
  }
  return { browser, context, page, consoleErrors, menu, settings, settled, signIn, run };
}
