// The signed-in user's time zone (an IANA name, `time_zone` of GET /v1/session): every time the
// dashboard shows, and every whole day it asks the API for, is in it. The zone rules are the
// browser's (Intl); the server reads the same names with its own zone database.

let current = 'UTC';

/** Sets the zone the pages write times in (the session's user's; UTC when unknown). */
export function setZone(zone: string | undefined | null): void {
  current = zone && validZone(zone) ? zone : 'UTC';
}
export function zone(): string {
  return current;
}

/** Whether the browser knows `zone`. */
export function validZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const formats = new Map<string, Intl.DateTimeFormat>();
function partsOf(t: number, tz: string): Record<string, number> {
  let f = formats.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formats.set(tz, f);
  }
  const out: Record<string, number> = {};
  for (const p of f.formatToParts(new Date(t))) if (p.type !== 'literal') out[p.type] = Number(p.value);
  return out;
}

/** Seconds east of UTC in force in `tz` at the instant `t` (ms). */
export function offsetAt(t: number, tz: string): number {
  const p = partsOf(t, tz);
  const local = Date.UTC(p.year, p.month - 1, p.day, p.hour % 24, p.minute, p.second);
  return Math.round((local - Math.floor(t / 1000) * 1000) / 1000);
}

/** "+05:30", "-04:00", "+00:00". */
export function offsetText(seconds: number): string {
  const sign = seconds < 0 ? '-' : '+';
  const m = Math.round(Math.abs(seconds) / 60);
  return `${sign}${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Whether the local time of `t` in `tz` happens twice (the hour repeated when clocks go back). */
export function ambiguous(t: number, tz: string): boolean {
  const here = offsetAt(t, tz);
  const local = t + here * 1000;
  for (const probe of [t - 3 * 3_600_000, t + 3 * 3_600_000]) {
    const other = offsetAt(probe, tz);
    if (other === here) continue;
    const twin = local - other * 1000;
    if (twin !== t && offsetAt(twin, tz) === other) return true;
  }
  return false;
}

/** An RFC 3339 time as "YYYY-MM-DD HH:MM:SS" in `tz`, with its offset where that local time
 *  happens twice ("2026-11-01 01:30:00 -04:00"), or "—". */
export function dateTimeIn(iso: string | null | undefined, tz: string): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const p = partsOf(t, tz);
  const text = `${p.year}-${pad(p.month)}-${pad(p.day)} ${pad(p.hour % 24)}:${pad(p.minute)}:${pad(p.second)}`;
  return ambiguous(t, tz) ? `${text} ${offsetText(offsetAt(t, tz))}` : text;
}

/** The date (YYYY-MM-DD) in `tz` at the instant `now`. */
export function dateIn(now: Date, tz: string): string {
  const p = partsOf(now.getTime(), tz);
  return `${p.year}-${pad(p.month)}-${pad(p.day)}`;
}

/** The date `days` days after `date` (YYYY-MM-DD; negative: before). */
export function addDays(date: string, days: number): string {
  return new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

/** Days from `from` to `to`, both included. */
export function daysIn(from: string, to: string): number {
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000) + 1;
}

export interface Range {
  from: string;
  to: string;
}
export type Preset = 'today' | '7d' | '30d' | 'custom';
export const PRESETS: [Preset, string][] = [
  ['today', 'Today'],
  ['7d', '7 days'],
  ['30d', '30 days'],
  ['custom', 'Custom'],
];

/** The whole days of a preset ending `today` (the user's date): today, or the last 7 or 30 days
 *  with today. */
export function presetRange(preset: Exclude<Preset, 'custom'>, today: string): Range {
  const days = preset === 'today' ? 1 : preset === '7d' ? 7 : 30;
  return { from: addDays(today, 1 - days), to: today };
}

/** The period just before `r`, as many days long. */
export function previousRange(r: Range): Range {
  const n = daysIn(r.from, r.to);
  return { from: addDays(r.from, -n), to: addDays(r.from, -1) };
}

/** The zones to choose from: the browser's list, with UTC and `keep` (the user's own) in it. */
export function zoneList(keep?: string): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  const list = intl.supportedValuesOf ? intl.supportedValuesOf('timeZone') : [];
  const all = new Set(list);
  all.add('UTC');
  if (keep) all.add(keep);
  return [...all].sort();
}

/** The browser's own zone, or UTC. */
export function browserZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}
