// Hand-drawn SVG charts: a line chart for a time series, horizontal bars for a breakdown.
// The geometry is pure (scale, ticks, points) and unit-tested; the drawing only places it.

export interface Point {
  label: string;
  value: number;
}

/** A "nice" upper bound and tick step for values up to `max` (1, 2 or 5 times a power of 10). */
export function niceScale(max: number, ticks = 4, integer = false): { top: number; step: number } {
  if (!(max > 0) || !Number.isFinite(max)) return integer ? { top: 1, step: 1 } : { top: 1, step: 0.25 };
  const raw = integer ? Math.max(1, max / ticks) : max / ticks;
  const power = 10 ** Math.floor(Math.log10(raw));
  const fraction = raw / power;
  const nice = fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10;
  const step = nice * power;
  return { top: step * Math.ceil(max / step), step };
}

/** Where each point sits in a plot of `width` × `height` (y grows downwards). */
export function linePoints(points: Point[], width: number, height: number, top: number): [number, number][] {
  const n = points.length;
  return points.map((p, i) => [
    n === 1 ? width / 2 : (i * width) / (n - 1),
    height - (Math.max(0, p.value) / (top || 1)) * height,
  ]);
}

const NS = 'http://www.w3.org/2000/svg';
function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const el = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

/** The chart's width in its own units: a chart fills its card, so its text is drawn at the card's
 *  width over this; wide on a wide screen (13-unit ticks read about 13 px at 1280 px, not 22),
 *  narrower on a phone, where style.css doubles the ticks (main.ts draws the page again when the
 *  screen crosses 600 px). */
function chartWidth(): number {
  return narrow() ? 720 : 1120;
}

export function lineChart(points: Point[], title: string, format: (v: number) => string): SVGSVGElement {
  const W = chartWidth(), H = narrow() ? 260 : 300, left = 64, right = 16, topPad = 16, bottom = 40;
  const plotW = W - left - right, plotH = H - topPad - bottom;
  const integer = points.every((p) => Number.isInteger(p.value));
  const { top, step } = niceScale(Math.max(0, ...points.map((p) => p.value)), 4, integer);
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', class: 'chart chart-line', 'aria-label': title });
  svg.appendChild(s('title', {}, title));
  const g = s('g', { transform: `translate(${left},${topPad})` });
  svg.appendChild(g);
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = plotH - (v / top) * plotH;
    g.appendChild(s('line', { x1: 0, x2: plotW, y1: y, y2: y, class: 'grid' }));
    g.appendChild(s('text', { x: -8, y: y + 4, 'text-anchor': 'end', class: 'tick' }, format(v)));
  }
  const xy = linePoints(points, plotW, plotH, top);
  if (xy.length) {
    const d = xy.map(([x, y], i) => `${i ? 'L' : 'M'}${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
    g.appendChild(s('path', { d: `${d} L${xy[xy.length - 1][0].toFixed(1)},${plotH} L${xy[0][0].toFixed(1)},${plotH} Z`, class: 'area' }));
    g.appendChild(s('path', { d, class: 'line' }));
    xy.forEach(([x, y], i) => {
      const dot = s('circle', { cx: x, cy: y, r: 3, class: 'dot' });
      dot.appendChild(s('title', {}, `${points[i].label}: ${format(points[i].value)}`));
      g.appendChild(dot);
    });
    // Only the labels that fit side by side at the size the page draws them (style.css makes
    // the ticks twice as large in the chart's units on a phone, where it is drawn smaller).
    const font = tickFont();
    const labels = points.map((p) => shortLabel(p.label));
    for (const t of thinLabels(xy.map(([x]) => x), labels.map((l) => labelWidth(l, font)), -left, plotW + right))
      g.appendChild(s('text', { x: t.x.toFixed(1), y: plotH + (font > 16 ? 30 : 18), 'text-anchor': 'middle', class: 'tick' }, labels[t.index]));
  } else {
    g.appendChild(s('text', { x: plotW / 2, y: plotH / 2, 'text-anchor': 'middle', class: 'tick' }, 'no data in this range'));
  }
  return svg;
}

export function barChart(points: Point[], title: string, format: (v: number) => string): SVGSVGElement {
  const rows = points.slice(0, 12);
  const W = chartWidth(), bar = 22, gap = 8, left = 200, right = 90;
  const H = Math.max(1, rows.length) * (bar + gap) + 8;
  const { top } = niceScale(Math.max(0, ...rows.map((p) => p.value)));
  const svg = s('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', class: 'chart chart-bar', 'aria-label': title });
  svg.appendChild(s('title', {}, title));
  rows.forEach((p, i) => {
    const y = 4 + i * (bar + gap);
    const w = ((W - left - right) * Math.max(0, p.value)) / (top || 1);
    svg.appendChild(s('text', { x: left - 8, y: y + bar / 2 + 4, 'text-anchor': 'end', class: 'tick' }, p.label.length > 24 ? p.label.slice(0, 23) + '…' : p.label));
    const r = s('rect', { x: left, y, width: Math.max(1, w), height: bar, class: 'bar' });
    r.appendChild(s('title', {}, `${p.label}: ${format(p.value)}`));
    svg.appendChild(r);
    svg.appendChild(s('text', { x: left + w + 6, y: y + bar / 2 + 4, class: 'tick' }, format(p.value)));
  });
  if (!rows.length) svg.appendChild(s('text', { x: W / 2, y: 20, 'text-anchor': 'middle', class: 'tick' }, 'no data in this range'));
  return svg;
}

/** "2026-11-26" → "11-26"; "2026-11-26T13:00:00Z" → "26 13:00"; anything else as it is. */
export function shortLabel(label: string): string {
  const t = /^\d{4}-(\d{2})-(\d{2})T(\d{2}:\d{2})/.exec(label);
  if (t) return `${t[2]} ${t[3]}`;
  const d = /^\d{4}-(\d{2}-\d{2})$/.exec(label);
  if (d) return d[1];
  return label.length > 14 ? label.slice(0, 13) + '…' : label;
}

/** The width of a label in the chart's units, at `font` units a character's height (a
 *  generous 0.62 em a character, so an estimate never lets two labels touch). */
export function labelWidth(label: string, font: number): number {
  return label.length * font * 0.62;
}

/** The size of the ticks' text in the chart's units (style.css: 13, or 26 on a narrow screen). */
function tickFont(): number {
  return narrow() ? 26 : 13;
}

function narrow(): boolean {
  return typeof matchMedia === 'function' && matchMedia('(max-width: 600px)').matches;
}

/** Which of the labels centred at `xs` (each `widths[i]` wide) to draw so that none overlaps the
 *  next or leaves [min, max], with a gap of `gap` between them: the last always (the newest day),
 *  then going back every n-th, n the smallest that fits; each centre moved inside the bounds. */
export function thinLabels(xs: number[], widths: number[], min: number, max: number, gap = 8): { index: number; x: number }[] {
  const n = xs.length;
  if (!n) return [];
  const place = (i: number) => Math.min(Math.max(xs[i], min + widths[i] / 2), max - widths[i] / 2);
  for (let step = 1; step <= n; step++) {
    const picked: { index: number; x: number }[] = [];
    for (let i = n - 1; i >= 0; i -= step) picked.unshift({ index: i, x: place(i) });
    const fits = picked.every((p, k) => k === 0 || picked[k - 1].x + widths[picked[k - 1].index] / 2 + gap <= p.x - widths[p.index] / 2);
    if (fits) return picked;
  }
  return [{ index: n - 1, x: place(n - 1) }];
}
