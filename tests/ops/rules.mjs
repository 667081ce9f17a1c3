// Prints the alert rules of k8s/base/monitoring.yaml's PrometheusRule as a plain Prometheus rules
// file: the PrometheusRule's spec is that file's content ({groups: [...]}). The manifest stays
// the one source of the rules; promtool and the tests read what this prints.
//
// Usage: node rules.mjs ROOT   (run from a directory whose node_modules has the yaml package)
import { readFileSync } from "node:fs";
import { parseAllDocuments, stringify } from "yaml";

const root = process.argv[2];
const file = `${root}/k8s/base/monitoring.yaml`;
const docs = parseAllDocuments(readFileSync(file, "utf8")).map((d) => {
  if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
  return d.toJS();
});
const rules = docs.filter((d) => d?.kind === "PrometheusRule");
if (rules.length !== 1) {
  console.error(`${file}: expected one PrometheusRule, found ${rules.length}`);
  process.exit(1);
}
process.stdout.write(stringify(rules[0].spec, { lineWidth: 0 }));
