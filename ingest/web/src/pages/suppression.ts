// Suppression lists (docs/suppression.md): the operator's page holds its own lists (a lead on one
// is refused at intake) and every buyer's; a buyer's portal holds its own (a lead on one is never
// sent to it). Each list shows its entries and last upload; a file replaces its entries; a list is
// deleted after a confirmation. What a reader may see is the API's to decide: the page shows what
// GET /v1/suppression-lists answers.
import { ApiError, del, get, post, upload } from '../api';
import { Ctx, isOperator } from '../app';
import { button, emptyState, field, h, input, notice, select, table } from '../dom';
import { FormErrors } from '../form';
import { count, dateTime } from '../format';

/** One list as the API shows it. */
export interface SuppressionList {
  list_id: string;
  name: string;
  buyer_id: string | null;
  entries: number;
  created_at: string;
  updated_at: string;
  uploaded_at: string | null;
}

interface Uploaded extends SuppressionList {
  upload: { read: number; repeats: number };
}

/** What an upload did, in a sentence. */
export function uploadSummary(u: Uploaded): string {
  const repeats = u.upload.repeats ? `, ${count(u.upload.repeats)} repeated ${u.upload.repeats === 1 ? 'line' : 'lines'} kept once` : '';
  return `“${u.name}” now holds ${count(u.entries)} ${u.entries === 1 ? 'entry' : 'entries'}${repeats}.`;
}

/** What a refused upload says: the API names the lines that are no entry. */
export function uploadError(e: unknown): string {
  if (e instanceof ApiError && e.status === 413) return 'The file is too large: a list takes at most 1 GiB (ten million entries).';
  return e instanceof Error ? e.message : String(e);
}

/** Whose a list is, as the operator reads it. */
export function ownerOf(l: SuppressionList, buyers: Map<string, string>): string {
  return l.buyer_id ? buyers.get(l.buyer_id) ?? l.buyer_id : 'Everyone (refused at intake)';
}

// What the last upload did, said once the page is drawn again with the list's new figures.
let uploaded: string | null = null;

export async function suppressionPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const operator = isOperator(ctx.user);
  const [lists, buyers] = await Promise.all([
    get<{ data: SuppressionList[] }>('/v1/suppression-lists'),
    operator ? get<{ data: { buyer_id: string; name: string }[] }>('/v1/buyers?limit=100') : Promise.resolve({ data: [] }),
  ]);
  const buyerNames = new Map(buyers.data.map((b) => [b.buyer_id, b.name] as [string, string]));
  const reload = () => ctx.go(location.pathname);
  const status = h('div', { class: 'suppression-status', 'aria-live': 'polite' });
  if (uploaded) status.append(notice(uploaded, 'ok'));
  uploaded = null;

  root.append(
    h('h1', {}, 'Suppression lists'),
    h(
      'p',
      { class: 'muted' },
      operator
        ? 'People who must never be sold. A lead on one of your own lists is refused when it arrives; a lead on a buyer’s list is never sent to that buyer.'
        : 'People you never want to be sent, such as your existing customers: a lead whose e-mail or phone is on one of your lists is not offered to you.',
    ),
  );

  // A new list: its name and, for the operator, whose it is.
  const name = field('name', 'Name', input({ required: true, maxlength: 200, placeholder: operator ? 'Do not contact' : 'Existing customers' }));
  const owner = operator ? field('buyer_id', 'For', select([['', 'Everyone (refused at intake)'], ...buyers.data.map((b) => [b.buyer_id, b.name] as [string, string])])) : null;
  const errors = new FormErrors(owner ? [name, owner] : [name]);
  const create = h('form', { class: 'card suppression-new', novalidate: true, 'aria-label': 'New suppression list' }, h('h2', {}, 'New list'), errors.element, name.wrapper, owner?.wrapper ?? null, h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Create list')));
  create.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    errors.clear();
    const body: Record<string, string> = { name: name.control.value.trim() };
    if (owner?.control.value) body.buyer_id = owner.control.value;
    try {
      await post('/v1/suppression-lists', body);
      reload();
    } catch (e) {
      errors.show(e);
    }
  });

  const rows = lists.data.map((l) => {
    const file = input({ type: 'file', accept: '.csv,.txt,text/csv,text/plain', 'aria-label': `File of entries for ${l.name}`, class: 'suppression-file' });
    const sendText = l.entries || l.uploaded_at ? 'Replace entries' : 'Upload entries';
    const send = button(
      sendText,
      async () => {
        const chosen = file.files?.[0];
        if (!chosen) {
          status.replaceChildren(notice(`Choose a file for “${l.name}” first.`, 'error'));
          return;
        }
        send.disabled = true;
        status.replaceChildren(notice(`Uploading ${chosen.name} to “${l.name}”…`));
        try {
          const done = await upload<{ data: Uploaded }>(`/v1/suppression-lists/${encodeURIComponent(l.list_id)}/entries`, chosen, chosen.type === 'text/plain' ? 'text/plain' : 'text/csv');
          uploaded = uploadSummary(done.data);
          reload();
        } catch (e) {
          send.disabled = false;
          status.replaceChildren(notice(uploadError(e), 'error'));
        }
      },
      { class: 'small', 'aria-label': `${sendText} of ${l.name}` },
    );
    const remove = button(
      'Delete',
      async () => {
        if (!confirm(`Delete the list “${l.name}” and its ${count(l.entries)} entries? Leads on it are no longer kept back.`)) return;
        try {
          await del(`/v1/suppression-lists/${encodeURIComponent(l.list_id)}`);
          reload();
        } catch (e) {
          status.replaceChildren(notice(e instanceof Error ? e.message : String(e), 'error'));
        }
      },
      { class: 'secondary small danger', 'aria-label': `Delete ${l.name}` },
    );
    const cells = [
      h('span', {}, h('strong', {}, l.name), h('br'), h('span', { class: 'mono muted small' }, l.list_id)),
      ...(operator ? [ownerOf(l, buyerNames)] : []),
      count(l.entries),
      l.uploaded_at ? h('time', { datetime: l.uploaded_at }, dateTime(l.uploaded_at)) : h('span', { class: 'muted' }, 'never'),
      h('div', { class: 'suppression-actions' }, file, send, remove),
    ];
    return cells;
  });
  const headers = ['List', ...(operator ? ['For'] : []), 'Entries', 'Last upload', 'Entries file'];
  root.append(
    status,
    lists.data.length
      ? table(headers, rows, `${lists.data.length} ${lists.data.length === 1 ? 'list' : 'lists'}`, undefined, 'suppression-lists')
      : emptyState(operator ? 'No list yet: make one below, then upload its file.' : 'No list yet: make one below, then upload your customers.'),
    create,
    h(
      'div',
      { class: 'card suppression-help' },
      h('h2', {}, 'The file'),
      h('p', {}, 'One entry a line, or a CSV whose first column holds them: an e-mail, a phone, or the SHA-256 of either written as 64 hex digits, so that you need not send the addresses themselves. A first line that is no entry is taken as a header. An upload replaces the list’s entries; only a fingerprint of each is kept.'),
      h('p', {}, 'Hash the e-mail trimmed and in lower case, the phone in E.164:'),
      h('pre', { class: 'mono' }, 'printf %s jane@example.com | sha256sum\nprintf %s +12125550123 | sha256sum'),
    ),
  );
}
