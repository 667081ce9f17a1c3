// Every relative link of README.md, ARCHITECTURE.md and docs/*.md reaches a file of the tree and,
// when it names an anchor (#section) of a Markdown page, a heading of that page, so a section
// moved or renamed cannot leave a link behind. Anchors are made as GitHub makes them: the
// heading in lower case, without what is neither a letter, a digit, a space, '-' nor '_', spaces
// as '-', and -1, -2... after repeats. Links inside code (fenced or `inline`) are not links.
//
// Usage: node tests/ops/docs_links.mjs SOURCE_DIR
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

const root = process.argv[2];
if (!root) {
  console.error("usage: node docs_links.mjs SOURCE_DIR");
  process.exit(2);
}

const stripCode = (text) => text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");

const anchorCache = new Map();
function anchors(file) {
  if (anchorCache.has(file)) return anchorCache.get(file);
  const seen = new Map();
  const out = new Set();
  for (const line of readFileSync(file, "utf8").replace(/^```[\s\S]*?^```/gm, "").split("\n")) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = m[1]
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  anchorCache.set(file, out);
  return out;
}

const pages = ["README.md", "ARCHITECTURE.md"]
  .concat(readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`))
  .filter((f) => existsSync(path.join(root, f)));

const problems = [];
let links = 0;
for (const page of pages) {
  const file = path.join(root, page);
  const text = stripCode(readFileSync(file, "utf8"));
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1];
    if (/^[a-z]+:/i.test(link)) continue; // https:, mailto:
    links++;
    const [target, anchor] = link.split("#");
    const resolved = target ? path.resolve(path.dirname(file), target) : file;
    if (!existsSync(resolved)) {
      problems.push(`${page}: ${link}: no such file`);
      continue;
    }
    if (anchor && resolved.endsWith(".md") && statSync(resolved).isFile() && !anchors(resolved).has(anchor))
      problems.push(`${page}: ${link}: no heading makes #${anchor}`);
  }
}
if (pages.length < 3 || links < 20) {
  console.error(`docs_links: read ${pages.length} pages and ${links} links; expected more`);
  process.exit(1);
}
if (problems.length) {
  console.error(problems.join("\n"));
  process.exit(1);
}
console.log(`docs_links: ${links} relative links in ${pages.length} pages, each reaching its target`);
