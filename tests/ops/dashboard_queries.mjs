// Checks k8s/grafana/leadflow.json against a Prometheus that scrapes a running leadflow: the
// dashboard's shape (uid, schema, the datasource and buyer variables), then every panel's query,
// with Grafana's variables replaced as Grafana would, through Prometheus's HTTP API. A query fails
// when Prometheus refuses it or answers no series, and a metric it names must be one leadflow
// exports (Prometheus's metadata of the scraped target), so a misspelt name cannot hide behind
// `or vector(0)`. With RULES_FILE, the alert rules' metric names are checked the same way.
//
// Usage: node dashboard_queries.mjs ROOT PROMETHEUS_URL [RULES_FILE]
import { readFileSync, readdirSync } from "node:fs";

const [root, prometheus, rulesFile] = process.argv.slice(2);
const dashboard = JSON.parse(readFileSync(`${root}/k8s/grafana/leadflow.json`, "utf8"));
const problems = [];
const problem = (what) => problems.push(what);

async function api(path, params) {
  const url = `${prometheus}/api/v1/${path}?${new URLSearchParams(params)}`;
  const res = await fetch(url);
  const body = await res.json();
  if (body.status !== "success") throw new Error(`${body.errorType}: ${body.error}`);
  return body.data;
}

// The dashboard as Grafana imports it.
if (dashboard.uid !== "leadflow-overview") problem(`uid is ${dashboard.uid}`);
if (!(dashboard.schemaVersion >= 36)) problem(`schemaVersion ${dashboard.schemaVersion}`);
const variables = Object.fromEntries((dashboard.templating?.list ?? []).map((v) => [v.name, v]));
if (variables.datasource?.type !== "datasource" || variables.datasource?.query !== "prometheus")
  problem("no datasource variable of type prometheus");
const buyerQuery = variables.buyer?.query?.query ?? variables.buyer?.query;
const buyerMatch = /^label_values\((.+),\s*(\w+)\)$/.exec(buyerQuery ?? "");
if (!buyerMatch) problem(`the buyer variable's query is not label_values(...): ${buyerQuery}`);

const rows = dashboard.panels.filter((p) => p.type === "row").map((p) => p.title);
for (const title of ["Overview", "Ingest", "Distribution", "Buyers", "Store and queue"])
  if (!rows.includes(title)) problem(`no row "${title}"`);

// $buyer: a real buyer id, found the way the variable finds it.
let buyer = "";
if (buyerMatch) {
  const values = await api(`label/${buyerMatch[2]}/values`, { "match[]": buyerMatch[1] });
  if (!values.length) problem(`the buyer variable finds no value: ${buyerQuery}`);
  buyer = values[0] ?? "";
}
const substitute = (expr) =>
  expr
    .replaceAll("$__rate_interval", "1m")
    .replaceAll("$__interval", "5s")
    .replaceAll("$__range", "5m")
    .replaceAll("${buyer}", buyer)
    .replaceAll("$buyer", buyer);

// Every metric leadflow exports, as Prometheus learnt it from the scrapes. prometheus-cpp leaves
// out a labelled family until its first sample (no produce failure, no buyer at capacity in a
// short run), so the families the sources register count too.
const exported = new Set(Object.keys(await api("metadata", {})));
function registered(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) registered(path);
    else if (/\.(cpp|hpp)$/.test(entry.name))
      for (const m of readFileSync(path, "utf8").matchAll(/\.Name\("([a-z0-9_]+)"\)/g)) exported.add(m[1]);
  }
}
for (const dir of ["common", "ingest", "workers"]) registered(`${root}/${dir}`);
const namesIn = (expr) => [...expr.matchAll(/\b((?:leadflow|process)_[a-z0-9_]+)/g)].map((m) => m[1]);
const known = (name) =>
  exported.has(name) || exported.has(name.replace(/_(bucket|sum|count)$/, ""));

const panels = dashboard.panels.flatMap((p) => (p.type === "row" ? p.panels ?? [] : [p]));
let queries = 0;
for (const panel of panels) {
  if (!panel.targets?.length) problem(`panel "${panel.title}" has no query`);
  for (const target of panel.targets ?? []) {
    const where = `panel "${panel.title}" ${target.refId}`;
    const expr = substitute(target.expr ?? "");
    if (/\$/.test(expr)) problem(`${where}: a variable is left: ${expr}`);
    for (const name of namesIn(expr)) if (!known(name)) problem(`${where}: leadflow exports no ${name}`);
    queries++;
    try {
      const data = await api("query", { query: expr });
      if (!data.result.length) problem(`${where}: no series for ${expr}`);
    } catch (e) {
      problem(`${where}: ${e.message} in ${expr}`);
    }
  }
}

let ruleNames = 0;
if (rulesFile) {
  // The rules file is YAML; its expressions are found line by line, enough for the names.
  for (const name of new Set(namesIn(readFileSync(rulesFile, "utf8")))) {
    ruleNames++;
    if (!known(name)) problem(`an alert rule names ${name}, which leadflow does not export`);
  }
}

if (rulesFile) {
  // Every rule evaluated at least once, without an error (a wrong label match or a vector
  // clash shows up only on evaluation).
  const { groups } = await api("rules", {});
  for (const rule of groups.flatMap((g) => g.rules)) {
    if (rule.health !== "ok") problem(`rule ${rule.name}: ${rule.health} ${rule.lastError ?? ""}`);
  }
}

if (problems.length) {
  for (const p of problems) console.error(`FAIL: ${p}`);
  process.exit(1);
}
console.log(`dashboard: ${panels.length} panels, ${queries} queries answered with series ($buyer=${buyer})` +
  (rulesFile ? `; ${ruleNames} metric names of the alert rules exported` : ""));
