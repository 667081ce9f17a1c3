import { describe, expect, it } from 'vitest';
import { dateTime, daysAgo } from '../src/format';
import { overviewRange, rangeText, tileValue } from '../src/pages/overview';
import { SETTINGS, settingsFor } from '../src/pages/settings_menu';
import { zoneLabel } from '../src/pages/time_zone';
import { addDays, ambiguous, dateIn, dateTimeIn, daysIn, offsetAt, offsetText, presetRange, previousRange, setZone, validZone, zone, zoneList } from '../src/zone';

const at = (iso: string) => Date.parse(iso);

describe('times in the user zone', () => {
  it('writes a time in the zone, with the offset only where the local time happens twice', () => {
    // New York falls back on 2026-11-01: 01:30 happens at 05:30Z (EDT) and again at 06:30Z (EST).
    expect(dateTimeIn('2026-11-01T05:30:00Z', 'America/New_York')).toBe('2026-11-01 01:30:00 -04:00');
    expect(dateTimeIn('2026-11-01T06:30:00Z', 'America/New_York')).toBe('2026-11-01 01:30:00 -05:00');
    expect(dateTimeIn('2026-11-01T08:00:00Z', 'America/New_York')).toBe('2026-11-01 03:00:00');
    expect(dateTimeIn('2026-11-26T01:02:03Z', 'Asia/Kolkata')).toBe('2026-11-26 06:32:03');
    // Lord Howe repeats half an hour: 01:45 is twice, 01:15 once.
    expect(ambiguous(at('2026-04-04T14:45:00Z'), 'Australia/Lord_Howe')).toBe(true);
    expect(ambiguous(at('2026-04-04T14:15:00Z'), 'Australia/Lord_Howe')).toBe(false);
    // The hour skipped in spring is not ambiguous; nor is anything in UTC.
    expect(ambiguous(at('2026-03-08T07:30:00Z'), 'America/New_York')).toBe(false);
    expect(dateTimeIn('2026-11-01T05:30:00Z', 'UTC')).toBe('2026-11-01 05:30:00');
    expect(dateTimeIn(null, 'UTC')).toBe('—');
    expect(dateTimeIn('not a time', 'UTC')).toBe('not a time');
  });

  it('finds offsets, half and three-quarter hours included', () => {
    expect(offsetText(offsetAt(at('2026-06-01T00:00:00Z'), 'America/New_York'))).toBe('-04:00');
    expect(offsetText(offsetAt(at('2026-06-01T00:00:00Z'), 'Asia/Kathmandu'))).toBe('+05:45');
    expect(offsetText(offsetAt(at('2026-06-01T00:00:00Z'), 'Australia/Eucla'))).toBe('+08:45');
    expect(offsetText(0)).toBe('+00:00');
  });

  it('reads dates in the zone', () => {
    // 23:30 on 1 November in New York is already the 2nd in UTC.
    const now = new Date('2026-11-02T04:30:00Z');
    expect(dateIn(now, 'America/New_York')).toBe('2026-11-01');
    expect(daysAgo(0, now, 'America/New_York')).toBe('2026-11-01');
    expect(daysAgo(6, now, 'America/New_York')).toBe('2026-10-26');
    expect(daysAgo(0, now, 'UTC')).toBe('2026-11-02');
    expect(dateIn(new Date('2026-11-01T10:30:00Z'), 'Pacific/Kiritimati')).toBe('2026-11-02');
  });

  it('keeps the session zone, UTC when it is unknown', () => {
    setZone('Europe/Paris');
    expect(zone()).toBe('Europe/Paris');
    expect(dateTime('2026-07-01T10:00:00Z')).toBe('2026-07-01 12:00:00');
    setZone('Mars/Olympus');
    expect(zone()).toBe('UTC');
    setZone(undefined);
    expect(zone()).toBe('UTC');
    expect(validZone('Asia/Kolkata')).toBe(true);
  });

  it('lists the zones with UTC and the user own', () => {
    const list = zoneList('Etc/GMT+5');
    expect(list).toContain('UTC');
    expect(list).toContain('Etc/GMT+5');
    expect(list).toContain('Europe/Paris');
    expect([...list].sort()).toEqual(list);
    expect(zoneLabel('Asia/Kolkata', at('2026-06-01T00:00:00Z'), 'Asia/Kolkata')).toBe('Asia/Kolkata (+05:30) — this browser');
    expect(zoneLabel('UTC', 0, 'Asia/Kolkata')).toBe('UTC (+00:00)');
  });
});

describe('ranges of whole days', () => {
  it('makes the presets and the period before', () => {
    expect(presetRange('today', '2026-11-01')).toEqual({ from: '2026-11-01', to: '2026-11-01' });
    expect(presetRange('7d', '2026-11-01')).toEqual({ from: '2026-10-26', to: '2026-11-01' });
    expect(presetRange('30d', '2026-03-01')).toEqual({ from: '2026-01-31', to: '2026-03-01' });
    expect(previousRange({ from: '2026-11-01', to: '2026-11-01' })).toEqual({ from: '2026-10-31', to: '2026-10-31' });
    expect(previousRange({ from: '2026-10-26', to: '2026-11-01' })).toEqual({ from: '2026-10-19', to: '2026-10-25' });
    expect(daysIn('2026-02-27', '2026-03-01')).toBe(3);
    expect(addDays('2026-12-31', 1)).toBe('2027-01-01');
  });

  it('reads the overview range from the address, refusing a custom range that is none', () => {
    const r = (q: string) => overviewRange(new URLSearchParams(q), '2026-11-01');
    expect(r('')).toEqual({ preset: 'today', range: { from: '2026-11-01', to: '2026-11-01' } });
    expect(r('range=30d').range).toEqual({ from: '2026-10-03', to: '2026-11-01' });
    expect(r('range=custom&from=2026-10-01&to=2026-10-05')).toEqual({ preset: 'custom', range: { from: '2026-10-01', to: '2026-10-05' } });
    expect(r('range=custom&from=2026-10-05&to=2026-10-01').preset).toBe('today');
    expect(r('range=custom&from=2020-01-01&to=2026-10-01').preset).toBe('today');
    expect(r('range=week').preset).toBe('today');
    expect(rangeText('7d', r('range=7d').range)).toBe('the last 7 days');
    expect(rangeText('custom', { from: '2026-10-01', to: '2026-10-01' })).toBe('2026-10-01');
  });

  it('writes a tile figure as its kind', () => {
    const t = { id: 'x', label: 'x', report: 'revenue' as const, figure: 'revenue', as: 'money' as const };
    expect(tileValue(t, { revenue: 1234.5 }, 'USD')).toBe('$1,234.50');
    expect(tileValue({ ...t, as: 'percent', figure: 'acceptance_rate' }, {}, 'USD')).toBe('—');
    expect(tileValue({ ...t, as: 'count', figure: 'leads' }, { leads: 3 }, 'USD')).toBe('3');
  });
});

describe('the settings menu', () => {
  it('holds every setting, users for the operator only', () => {
    expect(SETTINGS.map((e) => e.title)).toEqual(['Account', 'API keys', 'Users', 'Password', 'Two-factor', 'Time zone', 'Postbacks', 'Verticals']);
    const seller = { id: 'us_1', email: 'a@b', name: 'A', account: 'seller' as const, seller_id: 'sl_1', buyer_id: null };
    expect(settingsFor(seller).map((e) => e.title)).not.toContain('Users');
    expect(settingsFor({ ...seller, account: 'operator', seller_id: null }).map((e) => e.title)).toContain('Users');
    // Postbacks are sellers' (and the operator's, who sees every seller's); never a buyer's.
    expect(settingsFor(seller).map((e) => e.title)).toContain('Postbacks');
    expect(settingsFor({ ...seller, account: 'buyer', seller_id: null, buyer_id: 'by_1' }).map((e) => e.title)).not.toContain('Postbacks');
    // A seller's own account is a seller's page: a buyer reads its own on Buying, the operator has none.
    expect(settingsFor(seller).map((e) => e.title)).toContain('Account');
    expect(settingsFor({ ...seller, account: 'buyer', seller_id: null, buyer_id: 'by_1' }).map((e) => e.title)).not.toContain('Account');
    expect(settingsFor({ ...seller, account: 'operator', seller_id: null }).map((e) => e.title)).not.toContain('Account');
  });
});
