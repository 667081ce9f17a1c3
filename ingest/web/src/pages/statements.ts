// Statements: a buyer's invoice and a seller's payout statement for a month or a week, as the
// API answers them to the reader (the operator chooses the account and reads both sides and the
// margin). Printable: statements.css hides everything but the statement when printing, so the
// browser's "Print to PDF" makes the invoice.
import '../statements.css';
import { get } from '../api';
import { Ctx, isOperator } from '../app';
import { Child, button, field, h, select, table } from '../dom';
import { count, money } from '../format';
import { loadNames } from '../names';
import { Calendar, Party, PeriodRow, Statement, adjustmentNote, lineKind, moneyColumns, ownParty, statementFile, statementPath, statementTitle, statementsPath, totalRows } from '../statements';
import { dateTimeIn } from '../zone';

function otherParty(id: string, names: Map<string, string>): HTMLElement {
  const name = names.get(id);
  return h('span', { title: id, class: name ? '' : 'mono' }, name || id);
}

function statementCard(s: Statement, name: string, names: Map<string, string>): HTMLElement {
  const tz = s.time_zone;
  const when = (iso: string) => dateTimeIn(iso, tz);
  const totals = totalRows(s.totals).map(([label, n, key]) => [label, n ? count(s.totals[n]) : '', money(s.totals[key], s.currency)] as Child[]);
  const cols = moneyColumns(s.lines);
  // The other party of each line: the operator's alone (the API gives it no one else).
  const other: 'buyer_id' | 'seller_id' = s.party === 'buyer' ? 'seller_id' : 'buyer_id';
  const withOther = s.lines.some((l) => l[other] !== undefined);
  const lines = s.lines.map((l) => [
    when(l.at),
    h('span', { class: 'mono' }, l.lead_id),
    lineKind(l),
    adjustmentNote(l, s.period),
    // The other party by name (its id on hover): the statement is printed, so no copy button.
    ...(withOther ? [otherParty(l[other] ?? '', names)] : []),
    ...cols.map(([k]) => money(l[k] as number, s.currency)),
  ] as Child[]);
  const headers = ['Date', 'Lead', 'Kind', 'Note', ...(withOther ? [other === 'buyer_id' ? 'Buyer' : 'Seller'] : []), ...cols.map(([, t]) => t)];
  return h(
    'article',
    { class: 'card statement', id: 'statement', 'aria-label': `${statementTitle(s.party)} ${s.period}` },
    h('header', { class: 'statement-head' },
      h('h2', {}, `${statementTitle(s.party)} · ${s.period}`),
      h('p', {}, h('strong', {}, name || s.account_id), name ? ` (${s.account_id})` : ''),
      h('p', {}, `${when(s.from)} to ${when(s.to)} (${tz}), in ${s.currency}`),
      h('p', { class: s.status === 'closed' ? 'statement-final' : 'muted', id: 'statement-status' },
        s.status === 'closed' ? `Final: the period was closed on ${when(s.closed_at ?? '')}.` : 'Open: the period is not closed, so this statement may still change.'),
    ),
    h('section', { 'aria-label': 'Totals' }, table(['', 'Count', s.currency], totals, 'Totals', 'No total.', 'statement-totals')),
    h('section', { 'aria-label': 'Lines' }, table(headers, lines, `Lines (${s.lines.length})`, 'Nothing was bought, sold or returned in this period.', 'statement-lines phone-cards')),
  );
}

export async function statementsPage(ctx: Ctx, root: HTMLElement): Promise<void> {
  const operator = isOperator(ctx.user);
  const calendar: Calendar = ctx.search.get('calendar') === 'week' ? 'week' : 'month';
  const party: Party | undefined = ownParty(ctx.user.account) ?? (ctx.search.get('party') === 'seller' ? 'seller' : 'buyer');
  const [periods, names] = await Promise.all([get<{ data: PeriodRow[] }>(`/v1/periods?calendar=${calendar}`), operator ? loadNames('operator') : Promise.resolve(new Map<string, string>())]);
  // The latest period that has ended, else the current one.
  const rows = periods.data;
  const period = ctx.search.get('period') ?? (rows.find((p) => p.status !== 'current') ?? rows[0]).period;
  const accounts = [...names.entries()].filter(([id]) => id.startsWith(party === 'buyer' ? 'by_' : 'sl_'));
  const id = operator ? ctx.search.get('id') ?? accounts[0]?.[0] ?? '' : undefined;

  const cal = field('calendar', 'Periods', select([['month', 'Months'], ['week', 'Weeks']], calendar));
  const per = field('period', 'Period', select(rows.map((p) => [p.period, `${p.period}${p.status === 'closed' ? ' (closed)' : p.status === 'current' ? ' (current)' : ''}`]), period));
  const who = field('party', 'Statement of', select([['buyer', 'A buyer (invoice)'], ['seller', 'A seller (payouts)']], party));
  const acct = field('id', 'Account', select(accounts.map(([v, n]) => [v, n]), id ?? ''));
  const show = () => ctx.go(statementsPath({ calendar: cal.control.value as Calendar, period: cal.control.value === calendar ? per.control.value : undefined, party: operator ? (who.control.value as Party) : undefined, id: operator && who.control.value === party ? acct.control.value : undefined }));
  for (const f of [cal, per, who, acct]) f.control.addEventListener('change', show);
  root.append(
    h('h1', { class: 'no-print' }, 'Statements'),
    h('p', { class: 'muted no-print' }, ctx.user.account === 'buyer' ? 'Your invoice for a period: your purchases at your prices, your returns, and the total due.' : ctx.user.account === 'seller' ? 'Your payout statement for a period: your leads sold and their payouts, reversals for returns, and the total payout.' : "A buyer's invoice or a seller's payout statement for a period, with the margin."),
    h('form', { class: 'filters no-print', id: 'statement-choice', 'aria-label': 'Which statement' }, cal.wrapper, per.wrapper, operator ? who.wrapper : null, operator ? acct.wrapper : null),
  );
  if (operator && !id) {
    root.append(h('p', { class: 'empty-state' }, `No ${party} to show a statement of.`));
    return;
  }
  const s = (await get<{ data: Statement }>(statementPath(period, operator ? party : undefined, id))).data;
  const csv = statementPath(period, operator ? party : undefined, id, true);
  root.append(
    h('p', { class: 'no-print actions' },
      button('Print or save as PDF', () => window.print(), { id: 'print-statement' }), ' ',
      h('a', { href: csv, download: statementFile(s), class: 'button secondary', id: 'statement-csv' }, 'Download CSV')),
    statementCard(s, names.get(s.account_id) ?? '', names),
  );
}
