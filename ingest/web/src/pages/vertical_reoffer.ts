// A vertical's second chances as the operator changes them on its page (Settings → Verticals,
// docs/reoffers.md): the policy in force and where it comes from (the LEADFLOW_VERTICALS file, or
// set here), a form of the campaigns page's fields (campaign_reoffer.ts) that sets it
// (PUT /v1/verticals/{name}/reoffer) and a button back to the configured one (DELETE). The
// operator's alone: a seller or a buyer reads the policy in force, with no control.
import { del, put } from '../api';
import { Field, button, h } from '../dom';
import { FormErrors } from '../form';
import { isStale, staleNotice } from '../versions';
import { reofferBody, reofferFields, reofferText } from './campaign_reoffer';

type Rec = Record<string, any>;

/** Where the vertical's policy comes from, in words: "Set here on 2026-11-30 04:30 (the file
 *  says: 15 min, 2 h)." or "From the LEADFLOW_VERTICALS file." */
export function reofferSourceWords(v: Rec): string {
  const configured = v.configured_reoffer ? reofferText(v.configured_reoffer) : 'none';
  if (v.reoffer_source === 'operator') return `Set here${v.reoffer_set_at ? ` on ${String(v.reoffer_set_at).slice(0, 16).replace('T', ' ')} UTC` : ''}; the LEADFLOW_VERTICALS file says: ${configured}.`;
  return 'From the LEADFLOW_VERTICALS file, as read at start.';
}

/** The operator's card: the source, the form, and the reset button where a policy was set here.
 *  Each change is sent at the setting's version the page read (If-Match, docs/versions.md): when
 *  another operator changed it meanwhile, nothing is saved and the card says so, with a reload.
 *  `onDone` gets the vertical's view after a change (or none, to read it again). */
export function verticalReofferCard(v: Rec, onDone: (view?: Rec) => void): HTMLElement {
  const fields: Field[] = reofferFields(v, 'vertical');
  const errors = new FormErrors(fields);
  const path = `/v1/verticals/${encodeURIComponent(v.vertical)}/reoffer`;
  const refused = (e: unknown) => (isStale(e) ? errors.element.replaceChildren(staleNotice("vertical's second chances", () => onDone())) : errors.show(e));
  const reset = button(
    'Back to the configured policy',
    async () => {
      try {
        const res = await del<{ data: Rec }>(path, v.reoffer_version);
        errors.clear();
        onDone(res.data);
      } catch (e) {
        refused(e);
      }
    },
    { type: 'button', class: 'secondary', id: 'vertical-reoffer-reset' },
  );
  const form = h(
    'form',
    { class: 'grid-form', novalidate: true, id: 'vertical-reoffer-form' },
    errors.element,
    fields.map((f) => f.wrapper),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Save second chances'), v.reoffer_source === 'operator' ? reset : null),
  );
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const values: Record<string, string> = {};
    for (const f of fields) values[f.name] = f.control.value;
    try {
      const res = await put<{ data: Rec }>(path, { reoffer: reofferBody(values) }, v.reoffer_version);
      errors.clear();
      onDone(res.data);
    } catch (e) {
      refused(e);
    }
  });
  return h(
    'section',
    { class: 'card', 'aria-label': 'Change second chances', id: 'vertical-reoffer' },
    h('h2', {}, 'Change second chances'),
    h('p', { class: 'muted', id: 'vertical-reoffer-source' }, reofferSourceWords(v)),
    h('p', { class: 'muted' }, 'Workers take a change within 5 seconds: it applies to the leads decided after it; a re-offer already scheduled keeps its time.'),
    form,
  );
}
