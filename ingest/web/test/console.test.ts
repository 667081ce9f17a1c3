import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, errorText } from '../src/api';
import { labelWidth, linePoints, shortLabel, thinLabels } from '../src/chart';
import { h } from '../src/dom';
import { rangeError } from '../src/format';
import { personLine } from '../src/lead_view';
import { nameSources, namesFrom } from '../src/names';
import { csvName, fillDays } from '../src/report';

// The line chart's geometry (chart.ts): 720 units wide, 64 left and 16 right of a 640 plot.
const plotW = 640, left = 64, right = 16;
function drawn(days: number, font: number) {
  const points = fillDays([], '2026-10-29', new Date(Date.parse('2026-10-29T00:00:00Z') + (days - 1) * 86_400_000).toISOString().slice(0, 10));
  const xs = linePoints(points, plotW, 200, 1).map(([x]) => x);
  const labels = points.map((p) => shortLabel(p.label));
  const widths = labels.map((l) => labelWidth(l, font));
  return { labels, widths, shown: thinLabels(xs, widths, -left, plotW + right) };
}
function overlaps(shown: { index: number; x: number }[], widths: number[]): boolean {
  return shown.some((p, k) => k > 0 && shown[k - 1].x + widths[shown[k - 1].index] / 2 > p.x - widths[p.index] / 2);
}

describe('chart labels never overlap', () => {
  it('a week on a phone (the ticks 26 units high) keeps the last day and drops its neighbour', () => {
    const { shown, widths, labels } = drawn(7, 26);
    expect(overlaps(shown, widths)).toBe(false);
    expect(shown[shown.length - 1].index).toBe(6);
    // Drawn side by side, "11-03" and "11-04" used to collide: now every other day.
    expect(shown.length).toBeLessThan(7);
    expect(shown.map((s) => labels[s.index])).toContain('11-04');
  });
  it('30 days at 1280 px keep the newest day and never put two labels on each other', () => {
    const { shown, widths } = drawn(30, 13);
    expect(overlaps(shown, widths)).toBe(false);
    expect(shown[shown.length - 1].index).toBe(29);
    expect(shown.length).toBeGreaterThan(5);
    // Evenly spaced: the same step between every shown label.
    const steps = new Set(shown.slice(1).map((s, k) => s.index - shown[k].index));
    expect(steps.size).toBe(1);
  });
  it('every label stays inside the drawing', () => {
    for (const [days, font] of [[7, 26], [7, 13], [30, 13], [30, 26], [2, 26], [1, 13]]) {
      const { shown, widths } = drawn(days, font);
      for (const s of shown) {
        expect(s.x - widths[s.index] / 2).toBeGreaterThanOrEqual(-left);
        expect(s.x + widths[s.index] / 2).toBeLessThanOrEqual(plotW + right);
      }
    }
  });
  it('a week at 1280 px shows every day', () => {
    expect(drawn(7, 13).shown.length).toBe(7);
  });
  it('no point, no label', () => {
    expect(thinLabels([], [], 0, 100)).toEqual([]);
  });
});

describe('CSV names', () => {
  it('name the report and its days', () => {
    expect(csvName('revenue', '2026-11-01', '2026-11-27')).toBe('revenue_2026-11-01_2026-11-27.csv');
    expect(csvName('unsold', '2026-11-27', '2026-11-27')).toBe('unsold_2026-11-27_2026-11-27.csv');
    expect(csvName('performance', '../x', '2026-11-27')).toBe('performance_x_2026-11-27.csv');
  });
});

describe('date ranges', () => {
  it('From X To X is one whole day, so it is allowed', () => {
    expect(rangeError('2026-11-27', '2026-11-27')).toBeNull();
    expect(rangeError('', '2026-11-27')).toBeNull();
    expect(rangeError('', '')).toBeNull();
  });
  it('a From after To, or no date, is refused before asking the API', () => {
    expect(rangeError('2026-11-28', '2026-11-27')).toMatch(/after/);
    expect(rangeError('yesterday', '')).toMatch(/date/);
  });
});

describe('errors people read', () => {
  it('a network failure is not the bare "Failed to fetch"', () => {
    expect(errorText(new TypeError('Failed to fetch'))).toMatch(/Could not reach the server/);
    expect(errorText(new ApiError(502, 'HTTP 502'))).toMatch(/try again/);
    expect(errorText(new ApiError(404, 'no such lead'))).toBe('no such lead');
  });
});

describe('names for ids', () => {
  it('each account reads only the lists it may', () => {
    expect(nameSources('operator').map(([p]) => p)).toEqual(['/v1/sellers', '/v1/buyers?limit=100', '/v1/campaigns']);
    expect(nameSources('seller').map(([p]) => p)).toEqual(['/v1/campaigns']);
    expect(nameSources('buyer')).toEqual([]);
  });
  it('maps ids to names, skipping rows with neither', () => {
    const names = namesFrom([{ data: [{ seller_id: 'sl_1', name: 'Alpha' }, { seller_id: 'sl_2' }] }, { data: [{ buyer_id: 'by_1', name: 'Bee' }] }], ['seller_id', 'buyer_id']);
    expect([...names]).toEqual([['sl_1', 'Alpha'], ['by_1', 'Bee']]);
  });
  it('the person of a list row, as far as it was given', () => {
    expect(personLine({ first_name: 'Ada', last_name: 'Lovelace', email: 'ada@example.com', phone: '2025550100' })).toEqual({ name: 'Ada Lovelace', contact: 'ada@example.com · 2025550100' });
    expect(personLine({ lead_id: 'ld_1' })).toEqual({ name: '', contact: '' });
  });
});

// A stand-in for the few DOM calls h() makes (the tests run without a browser).
class FakeInput {
  checked = false;
  defaultChecked = false;
  value = '';
  defaultValue = '';
  attrs: Record<string, string> = {};
  setAttribute(k: string, v: string) { this.attrs[k] = v; }
  addEventListener() {}
  appendChild() {}
  /** What HTMLFormElement.reset() does to a control. */
  reset() { this.checked = this.defaultChecked; this.value = this.defaultValue; }
}

describe('form controls made by h()', () => {
  afterEach(() => vi.unstubAllGlobals());
  it('keep a ticked box ticked and a value after the form is reset', () => {
    vi.stubGlobal('document', { createElement: () => new FakeInput(), createTextNode: (t: string) => t });
    const box = h('input', { type: 'checkbox', checked: true }) as unknown as FakeInput;
    const name = h('input', { value: 'kept' }) as unknown as FakeInput;
    box.checked = false;
    name.value = 'typed';
    box.reset();
    name.reset();
    expect(box.checked).toBe(true);
    expect(name.value).toBe('kept');
  });
});
