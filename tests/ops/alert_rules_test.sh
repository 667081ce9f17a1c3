#!/usr/bin/env bash
# The alert rules of k8s/base/monitoring.yaml (its PrometheusRule, the one copy of them),
# extracted into a plain rules file, then `promtool check rules` and `promtool test rules` with
# tests/ops/alerts_test.yml: every alert fires on the series that should fire it and stays
# silent on the ones just short of it. Every alert must carry summary, description and a
# runbook_url naming a section of docs/runbook.md, and have a test of its own.
#
# Usage: tests/ops/alert_rules_test.sh BUILD_DIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: alert_rules_test.sh BUILD_DIR}
command -v promtool >/dev/null || { echo "alert_rules: promtool is missing (scripts/deps.sh --test)" >&2; exit 1; }

work=$(mktemp -d /tmp/leadflow-alerts-XXXXXX)
trap 'rm -rf "$work"' EXIT
"$root/tests/k8s/npm_install.sh" "$build/tests/k8s"
cp "$here/rules.mjs" "$here/alerts_test.yml" "$work/"
ln -s "$build/tests/k8s/node_modules" "$work/node_modules"
(cd "$work" && node rules.mjs "$root" > rules.yml)

promtool check rules "$work/rules.yml"
# Each test group of alerts_test.yml runs against the alerts it names and the recording rules
# their expressions read, not the whole file: promtool evaluates every rule of its files at every
# minute of a group, and the groups that span a day or more took 53 of the 69 s the whole file
# took, the alerts no group looks at being most of that work. An alert's expression reads only
# series and recording rules (never ALERTS), so what it fires on is the same either way.
(cd "$work" && node --input-type=module - <<'JS'
import { readFileSync, writeFileSync } from "node:fs";
import { parse, stringify } from "yaml";
const rules = parse(readFileSync("rules.yml", "utf8"));
const tests = parse(readFileSync("alerts_test.yml", "utf8"));
const records = rules.groups.flatMap((g) => g.rules).filter((r) => r.record).map((r) => r.record);
tests.tests.forEach((t, i) => {
  const alerts = new Set((t.alert_rule_test ?? []).map((a) => a.alertname));
  const wanted = new Set(alerts);
  for (const g of rules.groups)
    for (const r of g.rules)
      if (alerts.has(r.alert)) for (const rec of records) if (r.expr.includes(rec)) wanted.add(rec);
  const groups = rules.groups
    .map((g) => ({ ...g, rules: g.rules.filter((r) => wanted.has(r.alert ?? r.record)) }))
    .filter((g) => g.rules.length);
  writeFileSync(`rules-${i}.yml`, stringify({ groups }, { lineWidth: 0 }));
  writeFileSync(`test-${i}.yml`, stringify({ ...tests, rule_files: [`rules-${i}.yml`], tests: [t] }, { lineWidth: 0 }));
});
JS
)
(cd "$work" && promtool test rules test-*.yml)

# Annotations, runbook sections and tests, alert by alert.
(cd "$work" && node --input-type=module - "$root" <<'JS'
import { readFileSync } from "node:fs";
import { parse } from "yaml";
const root = process.argv[2];
const rules = parse(readFileSync("rules.yml", "utf8")).groups.flatMap((g) => g.rules).filter((r) => r.alert);
const tests = readFileSync("alerts_test.yml", "utf8");
// GitHub's anchors: lower case, spaces to dashes, punctuation dropped.
const anchors = new Set([...readFileSync(`${root}/docs/runbook.md`, "utf8").matchAll(/^##+ (.+)$/gm)]
  .map((m) => m[1].trim().toLowerCase().replace(/[^a-z0-9 _-]/g, "").replace(/ /g, "-")));
const problems = [];
for (const r of rules) {
  for (const a of ["summary", "description", "runbook_url"])
    if (!r.annotations?.[a]) problems.push(`${r.alert}: no ${a}`);
  const anchor = /^docs\/runbook\.md#(.+)$/.exec(r.annotations?.runbook_url ?? "")?.[1];
  if (!anchor || !anchors.has(anchor)) problems.push(`${r.alert}: runbook_url ${r.annotations?.runbook_url} names no section of docs/runbook.md`);
  const fired = new RegExp(`alertname: ${r.alert}\\n\\s*exp_alerts:\\s*\\n\\s*- exp_`).test(tests);
  const silent = new RegExp(`alertname: ${r.alert}\\n\\s*exp_alerts: \\[\\]`).test(tests);
  if (!fired || !silent) problems.push(`${r.alert}: alerts_test.yml must test it firing and not firing`);
}
for (const p of problems) console.error(`FAIL: ${p}`);
if (problems.length) process.exit(1);
console.log(`alert rules: ${rules.length} alerts, each annotated, in the runbook, tested firing and not`);
JS
)
