// "Return this lead" on a buyer's lead page: the reasons the server accepts, a note (required for
// "other"), the answer shown, and a refusal explained in words (buyer_portal.ts).
import { ApiError, post } from '../api';
import { Ctx } from '../app';
import { field, h, notice, select, textarea } from '../dom';
import { FormErrors } from '../form';
import { ReturnWindow, reasonLabel, returnFormError, returnRefusal, returnStanding } from '../buyer_portal';

/** The card: the window's standing, and the form while the lead may still be returned. */
export function returnCard(ctx: Ctx, leadId: string, w: ReturnWindow): HTMLElement {
  const card = h('section', { class: 'card', id: 'return-lead' }, h('h2', {}, 'Return this lead'), h('p', { id: 'return-standing' }, returnStanding(w)));
  if (!w.returnable) return card;
  const reason = field('reason', 'Reason', select([['', 'Choose a reason'], ...w.reasons.map((r) => [r, reasonLabel(r)] as [string, string])]));
  const note = field('note', 'Note', textarea('', { maxlength: 1000 }), 'required for "Other"; at most 1,000 characters');
  const errors = new FormErrors([reason, note]);
  const answer = h('div', { id: 'return-answer', 'aria-live': 'polite' });
  const form = h('form', { novalidate: true, 'aria-label': 'Return this lead' }, errors.element, reason.wrapper, note.wrapper, h('div', { class: 'actions' }, h('button', { type: 'submit', id: 'return-submit' }, 'Return this lead')));
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    errors.clear();
    answer.replaceChildren();
    const wrong = returnFormError(reason.control.value, note.control.value);
    if (wrong) return errors.show(new ApiError(400, 'the return is incomplete', [wrong]));
    try {
      await post(`/v1/leads/${encodeURIComponent(leadId)}/return`, { reason: reason.control.value, note: note.control.value.trim() || undefined });
      ctx.go(`/leads/${encodeURIComponent(leadId)}`);
    } catch (e) {
      if (!(e instanceof ApiError) || e.status === 400 || e.status >= 500) return errors.show(e);
      answer.replaceChildren(notice(returnRefusal(e.status, e.message, e.body), 'error'));
    }
  });
  card.append(form, answer);
  return card;
}
