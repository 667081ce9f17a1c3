// The operator's periods: months or weeks, each open, current or closed, and a Close button for
// one that has ended everywhere, asking to confirm first: a close makes the period's statements
// final, and a return or settlement after it lands in the next open period as an adjustment.
import { ApiError, get, post } from '../api';
import { Ctx } from '../app';
import { Child, button, h, link, notice, table } from '../dom';
import { dateTime } from '../format';
import { Calendar, PeriodRow, statementsPath } from '../statements';

interface Closed {
  data: { period: string; totals?: unknown[] };
}

export async function periodsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const calendar: Calendar = ctx.search.get('calendar') === 'week' ? 'week' : 'month';
  const rows = (await get<{ data: PeriodRow[] }>(`/v1/periods?calendar=${calendar}`)).data;
  const status = h('div', { class: 'form-summary', id: 'periods-status' });
  const done = ctx.search.get('closed');
  if (done) status.append(notice(`${done} is closed: its statements are final.`, 'ok'));

  const closeCell = (p: PeriodRow): Child => {
    if (!p.closable) return p.status === 'closed' ? '' : h('span', { class: 'muted' }, p.status === 'current' ? 'Not ended' : 'Not ended everywhere');
    const cell = h('div', { class: 'confirm' });
    const ask = button(`Close ${p.period}…`, () => {
      cell.replaceChildren(
        h('p', {}, `Close ${p.period} for good? Its statements become final; a return or settlement after now goes into the next open period.`),
        button(`Yes, close ${p.period}`, async () => {
          try {
            await post<Closed>(`/v1/periods/${p.period}/close`, {});
            ctx.go(`/periods?calendar=${calendar}&closed=${p.period}`);
          } catch (e) {
            status.replaceChildren(notice(e instanceof ApiError ? e.message : String(e), 'error'));
          }
        }, { class: 'danger', id: `confirm-close-${p.period}` }),
        ' ',
        button('Cancel', () => cell.replaceChildren(ask), { class: 'secondary' }),
      );
    }, { id: `close-${p.period}` });
    cell.append(ask);
    return cell;
  };

  root.append(
    h('h1', {}, 'Periods'),
    h('p', { class: 'muted' }, 'Closing a period makes its statements final: every buyer\'s invoice and seller\'s payout statement of it stays as it is. A period can be closed once it has ended everywhere (UTC-12); a period is cut in each account\'s own time zone.'),
    h('p', {}, link('/periods', 'Months', { 'aria-current': calendar === 'month' ? 'page' : undefined }), ' · ', link('/periods?calendar=week', 'Weeks', { 'aria-current': calendar === 'week' ? 'page' : undefined })),
    status,
    table(
      ['Period', 'From (UTC)', 'To (UTC)', 'Status', 'Closed', 'Statements', ''],
      rows.map((p) => [
        h('strong', {}, p.period),
        dateTime(p.from, 'UTC'),
        dateTime(p.to, 'UTC'),
        p.status === 'closed' ? 'Closed' : p.status === 'current' ? 'Current' : 'Open',
        // Who closed it is an id, which breaks anywhere on a phone's card.
        p.closed_at ? h('span', {}, dateTime(p.closed_at), p.closed_by ? [' by ', h('span', { class: 'mono' }, p.closed_by)] : '') : '',
        link(statementsPath({ calendar, period: p.period }), 'Statements'),
        closeCell(p),
      ]),
      `${calendar === 'month' ? 'Months' : 'Weeks'}, newest first`,
      'No period.',
      'periods-table phone-cards',
    ),
  );
}
