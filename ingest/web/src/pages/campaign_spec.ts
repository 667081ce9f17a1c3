import { get } from '../api';
import { counted } from '../format';
import { Ctx } from '../app';
import { button, h, link, table } from '../dom';

type Rec = Record<string, any>;

/** What a valid value of a field is, in a line: its rule, then its bounds and values. */
export function fieldRule(f: Rec): string {
  const parts: string[] = [];
  if (f.rule) parts.push(String(f.rule));
  const text = f.type === 'string';
  if (f.min != null && f.max != null) parts.push(text ? `${f.min}–${f.max} characters` : `${f.min} to ${f.max}`);
  else if (f.min != null) parts.push(text ? `at least ${f.min} characters` : `at least ${f.min}`);
  else if (f.max != null) parts.push(text ? `at most ${f.max} characters` : `at most ${f.max}`);
  if (f.values?.length) parts.push(`one of: ${f.values.join(', ')}`);
  if (f.max_length) parts.push(`up to ${f.max_length} characters`);
  return parts.join('; ');
}

/** A curl command posting the example lead to `origin`, with the key's placeholder in it. */
export function curlOf(spec: Rec, origin: string): string {
  const body = JSON.stringify(spec.example_request, null, 2).replace(/'/g, "'\\''");
  return `curl -X POST ${origin}/api/v1/lead \\\n  -H 'Content-Type: application/json' \\\n  -d '${body}'`;
}

/** The specification as a Markdown document, for the seller's developers. */
export function specMarkdown(spec: Rec, origin: string): string {
  const c = spec.campaign ?? {};
  const out: string[] = [];
  out.push(`# Posting leads to "${c.name}"`, '');
  out.push(`Vertical: ${c.vertical}. Mode: ${c.mode === 'async' ? 'async (every good lead is answered 202 at once)' : `sync (answered with the outcome within ${c.sync_timeout_ms} ms, else 202)`}. At most ${c.rate_limit_per_minute} leads a minute.`, '');
  out.push('## Authentication', '', String(spec.authentication?.how ?? ''), '');
  out.push('## Endpoints', '');
  for (const e of spec.endpoints ?? []) {
    out.push(`- \`${e.method} ${origin}${e.path}\`: ${e.what}${e.content_types ? ` (${e.content_types.join(', ')})` : ''}${e.headers ? `, with ${e.headers.join(', ')}` : ''}`);
  }
  out.push('', '## Fields', '', '| field | required | type | a valid value |', '|---|---|---|---|');
  for (const f of spec.fields ?? []) out.push(`| \`${f.name}\` | ${f.required ? 'yes' : 'no'} | ${f.type} | ${fieldRule(f).replace(/\|/g, '\\|')} |`);
  out.push('', '## Example', '', '```sh', curlOf(spec, origin), '```', '', '## Answers', '');
  for (const e of spec.examples ?? []) {
    out.push(`### ${e.status}: ${e.when}`, '');
    const headers = Object.entries(e.headers ?? {}).map(([k, v]) => `${k}: ${v}`);
    if (headers.length) out.push('```', ...headers, '```', '');
    out.push('```json', JSON.stringify(e.body, null, 2), '```', '');
  }
  return out.join('\n');
}

/** A file name for the document: the campaign's name, in lower case and dashes. */
export function specFileName(name: string): string {
  const slug = String(name ?? '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
  return `${slug || 'campaign'}-specification.md`;
}

function codeBlock(text: string): HTMLElement {
  return h('pre', { class: 'code', tabindex: '0' }, h('code', {}, text));
}

export async function campaignSpecPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const spec = (await get<{ data: Rec }>(`/v1/campaigns/${encodeURIComponent(ctx.params.id)}/specification`)).data;
  const c = spec.campaign ?? {};
  const origin = location.origin;
  const copy = button('Copy the curl command', async () => {
    await navigator.clipboard.writeText(curlOf(spec, origin));
    copy.textContent = 'Copied';
  }, { class: 'secondary small' });
  const download = button('Download for your developers (Markdown)', () => {
    const url = URL.createObjectURL(new Blob([specMarkdown(spec, origin)], { type: 'text/markdown' }));
    const a = h('a', { href: url, download: specFileName(c.name) });
    document.body.append(a);
    a.click();
    a.remove();
    URL.revokeObjectURL(url);
  }, { class: 'secondary', id: 'spec-download' });
  root.append(
    h('p', {}, link('/campaigns', '← Campaigns')),
    h('h1', {}, `Specification: ${c.name}`),
    h('p', {}, `Vertical ${c.vertical}; ${c.mode === 'async' ? 'async: every good lead is answered 202 at once' : `sync: answered with the outcome within ${c.sync_timeout_ms} ms, else 202`}; at most ${c.rate_limit_per_minute} leads a minute. Hand this page to the developers who post your leads.`),
    h('p', {}, download),
    h('section', { class: 'card' }, h('h2', {}, 'Authentication'), h('p', {}, spec.authentication?.how ?? '')),
    h('section', { class: 'card' }, h('h2', {}, 'Endpoints'),
      table(['Method', 'Path', 'What', 'Sent as'], (spec.endpoints ?? []).map((e: Rec) => [
        e.method, h('span', { class: 'mono' }, `${origin}${e.path}`), e.what, (e.content_types ?? e.headers ?? []).join(', '),
      ]), 'Endpoints')),
    h('section', { class: 'card' }, h('h2', {}, 'Fields'),
      table(['Field', 'Required', 'Type', 'A valid value'], (spec.fields ?? []).map((f: Rec) => [
        h('span', { class: 'mono' }, f.name), f.required ? 'required' : 'optional', f.type, fieldRule(f),
      ]), counted((spec.fields ?? []).length, 'field'))),
    h('section', { class: 'card' }, h('h2', {}, 'Example'), h('p', {}, 'Put your campaign key in place of YOUR_CAMPAIGN_KEY (it was shown once, when the campaign was made). ', copy), codeBlock(curlOf(spec, origin))),
    h('section', { class: 'card', id: 'spec-answers' }, h('h2', {}, 'Answers'),
      (spec.examples ?? []).map((e: Rec) => h('div', { class: 'example' },
        h('h3', {}, `${e.status}: ${e.when}`),
        Object.keys(e.headers ?? {}).length ? codeBlock(Object.entries(e.headers).map(([k, v]) => `${k}: ${v}`).join('\n')) : null,
        codeBlock(JSON.stringify(e.body, null, 2)),
      ))),
  );
}
