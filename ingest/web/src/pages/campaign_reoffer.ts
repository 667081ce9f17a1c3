// A campaign's own re-offer policy on the campaigns page (docs/reoffers.md): its vertical's (the
// default), its own delays, or none; shown in the list and set in the operator's campaign form
// (`reoffer` of POST/PUT /v1/campaigns). The same fields edit a vertical's policy on its page
// (Settings → Verticals, PUT /v1/verticals/{name}/reoffer): there the choice is delays or none.
import { Field, field, input, select } from '../dom';
import { splitList } from '../format';

type Rec = Record<string, any>;

/** A delay in words: 900 → "15 min", 7200 → "2 h", 86400 → "1 d", 90 → "90 s". */
export function delayWords(seconds: number): string {
  if (seconds % 86400 === 0) return `${seconds / 86400} d`;
  if (seconds % 3600 === 0) return `${seconds / 3600} h`;
  if (seconds % 60 === 0) return `${seconds / 60} min`;
  return `${seconds} s`;
}

/** The campaign's policy as the list shows it. */
export function reofferText(r: Rec | null | undefined): string {
  if (r === null || r === undefined) return "vertical's";
  const delays: number[] = r.delays_seconds ?? [];
  if (!delays.length) return 'none';
  return delays.map(delayWords).join(', ') + (r.window_hours ? ` (within ${r.window_hours} h)` : '');
}

/** Which of the three a policy is. */
export function reofferChoice(r: Rec | null | undefined): 'vertical' | 'own' | 'none' {
  if (r === null || r === undefined) return 'vertical';
  return (r.delays_seconds ?? []).length ? 'own' : 'none';
}

/** The form's fields: the choice, the delays (seconds) and the window (hours). For a campaign
 *  (`c`, null when made) the choice is its vertical's, its own or none; for a vertical (`of`
 *  'vertical', `c` its view) delays or none. */
export function reofferFields(c: Rec | null, of: 'campaign' | 'vertical' = 'campaign'): Field[] {
  const r = c?.reoffer;
  const choices: [string, string][] =
    of === 'campaign'
      ? [
          ['vertical', "the vertical's policy"],
          ['own', 'its own delays'],
          ['none', 'none: an unsold lead is final'],
        ]
      : [
          ['own', 'these delays'],
          ['none', 'none: an unsold lead is final'],
        ];
  const hint =
    of === 'campaign'
      ? "An unsold lead is offered again to buyers of aged leads after each delay; this campaign's own policy replaces its vertical's."
      : "An unsold lead of this vertical is offered again to buyers of aged leads after each delay; a campaign's own policy still replaces it.";
  const choice = of === 'vertical' && !(r?.delays_seconds ?? []).length ? 'none' : reofferChoice(r);
  return [
    field('reoffer', 'Second chances', select(choices, choice), hint),
    field('reoffer.delays_seconds', 'Re-offer delays (seconds)', input({ value: (r?.delays_seconds ?? []).join(', '), placeholder: '900, 7200, 86400' }), 'With its own delays: 1 to 10, increasing, each counted from the lead’s receipt.'),
    field('reoffer.window_hours', 'Re-offer window (hours)', input({ inputmode: 'numeric', value: r?.window_hours ?? '' }), 'Optional: no re-offer later than this after the receipt.'),
  ];
}

/** The `reoffer` member of a campaign body from the form's values: null for the vertical's,
 *  no delays for none, else the delays (numbers as typed; the API judges them) and window. */
export function reofferBody(v: Record<string, string>): Rec | null {
  if (v.reoffer === 'vertical') return null;
  if (v.reoffer === 'none') return { delays_seconds: [] };
  const out: Rec = { delays_seconds: splitList(v['reoffer.delays_seconds'] ?? '').map(Number) };
  if (v['reoffer.window_hours']?.trim()) out.window_hours = Number(v['reoffer.window_hours']);
  return out;
}
