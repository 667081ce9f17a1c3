// Erasure on a lead page (docs/erasure.md): "Personal data erased on …" for every reader of an
// erased lead, and the operator's "Erase personal data" button, asked to confirm first.
import { ApiError, post } from '../api';
import { Ctx } from '../app';
import { button, h, notice } from '../dom';
import { dateTime } from '../format';

/** The words an erased lead carries at the top of its page; null for a lead not erased. */
export function erasedText(erasedAt: unknown, tz?: string): string | null {
  if (typeof erasedAt !== 'string' || !erasedAt) return null;
  return `Personal data erased on ${dateTime(erasedAt, tz)}. The money and the reports are unchanged; what buyers were delivered is theirs.`;
}

export function erasedNote(erasedAt: unknown): HTMLElement | null {
  const text = erasedText(erasedAt);
  return text ? h('p', { class: 'notice', id: 'erased-note', role: 'status' }, text) : null;
}

/** The confirmation the operator answers before a lead is erased. */
export function eraseQuestion(leadId: string): string {
  return `Erase the personal data of lead ${leadId}? Its name, e-mail, phone, address, IP address, consent and custom fields are removed for good; its money and reports stay.`;
}

/** The operator's card: a lead not erased yet, erased on a click and a confirmation. */
export function eraseCard(ctx: Ctx, leadId: string, status: string): HTMLElement {
  const answer = h('div', { id: 'erase-answer', 'aria-live': 'polite' });
  const pending = status === 'pending';
  const erase: HTMLButtonElement = button(
    'Erase personal data',
    async () => {
      if (!confirm(eraseQuestion(leadId))) return;
      erase.disabled = true;
      try {
        await post(`/v1/leads/${encodeURIComponent(leadId)}/erase`, {});
        ctx.go(`/leads/${encodeURIComponent(leadId)}`);
      } catch (e) {
        erase.disabled = false;
        answer.replaceChildren(notice(e instanceof ApiError ? e.message : String(e), 'error'));
      }
    },
    { id: 'erase-lead', class: 'danger', disabled: pending },
  );
  return h(
    'section',
    { class: 'card', id: 'erase-personal-data' },
    h('h2', {}, 'Erase personal data'),
    h('p', {}, pending ? 'The lead is still being distributed: it can be erased once it is decided.' : 'At the person’s request: the person’s fields are removed from the store for good. The lead, its money and the reports stay, and a new lead of the same person is still a duplicate.'),
    erase,
    answer,
  );
}
