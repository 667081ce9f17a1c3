// Statements and periods as the pages draw them (docs/statements.md): which totals and columns a
// statement has for its reader, each line's words, and the API paths. Only what the API gave is
// shown: a buyer's statement holds no payout or margin, a seller's no price or buyer (the API
// leaves them out), so a figure missing from the answer is no row here.
import { query } from './api';

export type Party = 'buyer' | 'seller';
export type Calendar = 'month' | 'week';

export interface StatementLine {
  entry_id: number;
  kind: 'sale' | 'return';
  settled: boolean;
  lead_id: string;
  at: string;
  adjustment: boolean;
  home_period: string;
  ref_period: string;
  ref_at: string;
  buyer_id?: string;
  seller_id?: string;
  amount?: number;
  payout?: number;
  margin?: number;
}

export interface Statement {
  party: Party;
  account_id: string;
  period: string;
  calendar: Calendar;
  time_zone: string;
  from: string;
  to: string;
  currency: string;
  status: 'open' | 'closed';
  closed_at: string | null;
  totals: Record<string, number>;
  lines: StatementLine[];
}

export interface PeriodRow {
  period: string;
  calendar: Calendar;
  status: 'current' | 'open' | 'closed';
  from: string;
  to: string;
  closed_at: string | null;
  closed_by?: string;
  closable?: boolean;
}

/** The statement's API path (and its CSV's). */
export function statementPath(period: string, party?: Party, id?: string, csv = false): string {
  return `/v1/statements${query({ party, id, period, format: csv ? 'csv' : undefined })}`;
}

/** The CSV's file name, as the server names it. */
export function statementFile(s: Pick<Statement, 'party' | 'account_id' | 'period'>): string {
  return `statement_${s.party}_${s.account_id}_${s.period}.csv`;
}

/** The statement's title: a buyer's is its invoice, a seller's its payout statement. */
export function statementTitle(party: Party): string {
  return party === 'buyer' ? 'Invoice' : 'Payout statement';
}

/** The totals' rows the answer holds, in order: [label, count or null, amount key]. */
export function totalRows(totals: Record<string, number>): [string, string | null, string][] {
  const rows: [string, string | null, string][] = [];
  const add = (label: string, n: string | null, key: string) => {
    if (key in totals) rows.push([label, n, key]);
  };
  add('Purchases', 'sales', 'sales_amount');
  add('Returns', 'returns', 'returns_amount');
  add('Of which adjustments (earlier periods)', 'adjustments', 'adjustments_amount');
  add('Total due', null, 'total');
  add('Leads sold: payouts', 'sales', 'payouts');
  add('Reversals (returns)', 'returns', 'reversals');
  add('Of which adjustments (earlier periods)', 'adjustments', 'adjustments_payout');
  add('Total payout', null, 'total_payout');
  add('Margin', null, 'margin');
  return rows;
}

/** The money columns of the lines, as the answer holds them. */
export function moneyColumns(lines: StatementLine[]): [keyof StatementLine, string][] {
  const all: [keyof StatementLine, string][] = [['amount', 'Amount'], ['payout', 'Payout'], ['margin', 'Margin']];
  return all.filter(([k]) => lines.some((l) => l[k] !== undefined));
}

/** What a line is: a sale, a settled sale or a return. */
export function lineKind(l: StatementLine): string {
  if (l.kind === 'return') return 'Return';
  return l.settled ? 'Settled sale' : 'Sale';
}

/** Why a line of `period`'s statement is an adjustment, or "" when it is not one: it refers to
 *  a sale of another period, or it was dated in a period closed before it was written. */
export function adjustmentNote(l: StatementLine, period: string): string {
  if (!l.adjustment) return '';
  const parts: string[] = [];
  if (l.ref_period !== period) parts.push(`${l.kind === 'return' ? 'returns a sale' : l.settled ? 'settles a lead' : 'a sale'} of ${l.ref_period}`);
  if (l.home_period !== period) parts.push(`dated in ${l.home_period}, closed before it was written`);
  return parts.length ? `Adjustment: ${parts.join('; ')}` : 'Adjustment';
}

/** The Statements page's path for a choice of calendar, period and account. */
export function statementsPath(params: { calendar?: Calendar; period?: string; party?: Party; id?: string }): string {
  return `/statements${query(params as Record<string, string | undefined>)}`;
}

/** Whom a statement is of by default: the reader's own account; the operator chooses. */
export function ownParty(account: 'operator' | 'seller' | 'buyer'): Party | undefined {
  return account === 'buyer' ? 'buyer' : account === 'seller' ? 'seller' : undefined;
}
