// The first-run guide's logic (pages/get_started.ts): a sample lead a new seller can post at once,
// valid for the vertical it asks (the vertical's required fields filled from their published
// rules, GET /api/v1/fields/{vertical}), and the curl command posting it with the seller's key.
// Pure: unit-tested without a browser.

type Rec = Record<string, any>;

/** The vertical posted when the seller has no campaign to take one from. */
export const DEFAULT_VERTICAL = 'auto_insurance';

/** The vertical of the seller's first campaign that names one, else the default. */
export function guideVertical(campaigns: Rec[]): string {
  const named = campaigns.find((c) => typeof c.vertical === 'string' && c.vertical);
  return named ? named.vertical : DEFAULT_VERTICAL;
}

/** A value the vertical's field accepts, from its published type, bounds and values. */
export function sampleValue(f: Rec): string | number | boolean {
  if (Array.isArray(f.values) && f.values.length) return f.values[0];
  const low = typeof f.min === 'number' ? f.min : 0;
  const high = typeof f.max === 'number' ? f.max : Math.max(low, 100);
  if (f.type === 'integer') return Math.floor((low + high) / 2);
  if (f.type === 'number') return (low + high) / 2;
  if (f.type === 'boolean') return true;
  let text = 'example';
  while (typeof f.min === 'number' && text.length < f.min) text += 'x';
  return typeof f.max === 'number' ? text.slice(0, f.max) : text;
}

/** A lead for POST /v1/leads in `vertical`: an obviously sample person, its e-mail and phone
 *  made from `tag` (four digits or more) so that posting it again from another page is no
 *  duplicate, and the vertical's required fields in `custom_fields`. */
export function sampleLead(vertical: string, fields: Rec[], tag: string): Rec {
  const digits = (tag.replace(/\D/g, '') + '0000').slice(0, 4);
  const lead: Rec = {
    first_name: 'Ada',
    last_name: 'Sample',
    email: `ada.sample.${tag}@example.com`,
    phone: `202555${digits}`,
    zip_code: '20001',
    vertical,
    source: 'first-run-guide',
  };
  const custom: Rec = {};
  for (const f of fields) if (f && f.required && typeof f.name === 'string') custom[f.name] = sampleValue(f);
  if (Object.keys(custom).length) lead.custom_fields = custom;
  return lead;
}

/** The key's place in the command until a key is made. */
export const KEY_PLACEHOLDER = 'YOUR_API_KEY';

/** A curl command posting `lead` to this server's `origin` with `key` (shell-quoted). */
export function curlCommand(origin: string, key: string, lead: Rec): string {
  const body = JSON.stringify(lead, null, 2).replace(/'/g, "'\\''");
  return `curl -X POST ${origin}/v1/leads \\\n  -H 'Authorization: Bearer ${key}' \\\n  -H 'Content-Type: application/json' \\\n  -d '${body}'`;
}
