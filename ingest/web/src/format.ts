// How the dashboard writes numbers, money, rates and times.
import { addDays, dateIn, dateTimeIn, zone } from './zone';

export function money(value: number | null | undefined, currency = 'USD'): string {
  if (value === null || value === undefined || Number.isNaN(value)) return '—';
  const sign = value < 0 ? '-' : '';
  const abs = Math.abs(value);
  const [whole, cents] = abs.toFixed(2).split('.');
  const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${currency === 'USD' ? '$' : currency + ' '}${grouped}.${cents}`;
}

export function count(value: number | null | undefined): string {
  if (value === null || value === undefined) return '—';
  return String(Math.round(value)).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** A rate in [0, 1] as a percentage with one decimal. */
export function percent(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || Number.isNaN(rate)) return '—';
  return `${(rate * 100).toFixed(1)}%`;
}

/** An RFC 3339 time as "YYYY-MM-DD HH:MM:SS" in the user's zone (zone.ts), with the offset
 *  where that local time happens twice, or "—". */
export function dateTime(iso: string | null | undefined, tz: string = zone()): string {
  return dateTimeIn(iso, tz);
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${Math.round(ms)} ms`;
}

/** The date (YYYY-MM-DD) in the user's zone `days` days before the one holding `now`. */
export function daysAgo(days: number, now: Date = new Date(), tz: string = zone()): string {
  return addDays(dateIn(now, tz), -days);
}

/** Splits "a, b,,c" into ["a", "b", "c"]. */
export function splitList(text: string): string[] {
  return text
    .split(/[,\n]/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** A range of days chosen in a form (YYYY-MM-DD, either may be empty): null when it is usable,
 *  else what is wrong. The API reads a bare date as the whole day, both ends included, so
 *  From X To X is the day X. */
export function rangeError(from: string, to: string): string | null {
  const day = /^\d{4}-\d{2}-\d{2}$/;
  if (from && !day.test(from)) return 'From must be a date';
  if (to && !day.test(to)) return 'To must be a date';
  if (from && to && from > to) return 'From must not come after To';
  return null;
}

/** "1 buyer", "3 buyers", "1,200 leads": a count and its noun, singular for one. */
export function counted(n: number, one: string, many = `${one}s`): string {
  return `${count(n)} ${n === 1 ? one : many}`;
}
