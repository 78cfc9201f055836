/**
 * Player and club charts: Chart.js draws the plot onto a napi canvas, we draw the frame around it
 * (header, summary numbers, notes, credit line) in the shared visual language. A chart with too little
 * recorded history is still a finished picture that says so.
 */
import { createCanvas, type Canvas } from '@napi-rs/canvas';
import { Chart, registerables, type ChartConfiguration } from 'chart.js';
import { CHART_SIZE, type ChartOption } from './catalogue.ts';
import {
  background,
  creditLine,
  drawName,
  drawParagraph,
  drawText,
  emptyState,
  fmt,
  fmtCompact,
  fmtSigned,
  makeCanvas,
  panel,
  releasePixels,
  THEME,
  type Ctx,
  type Quality,
} from './draw.ts';
import { fontFamily } from './fonts.ts';
import { nameColorToCss } from '../upstream/api-format.ts';
import type { ChartInput, ChartSeries } from './types.ts';
import { wordsFor, type Words } from './words.ts';

Chart.register(...registerables);

const PALETTE = [THEME.trophy, '#5fd3ff', '#ff7ad9', THEME.win];
const DAY = 86_400_000;
/** Tick label for a time, at a granularity fitting the span shown, in the reader's language. */
export function timeLabel(t: number, spanMs: number, words: Words = wordsFor()): string {
  const d = new Date(t);
  const hhmm = `${String(d.getUTCHours()).padStart(2, '0')}:${String(d.getUTCMinutes()).padStart(2, '0')}`;
  if (spanMs <= 2 * DAY) return hhmm;
  if (spanMs <= 200 * DAY) return words.date(t, 'dayMonth');
  return words.date(t, 'shortMonthYear');
}

interface Summary {
  label: string;
  value: string;
  color?: string;
}

function summaries(opt: ChartOption<string>, series: ChartSeries[], words: Words): Summary[] {
  const main = series[0]?.points ?? [];
  if (main.length === 0) return [];
  if (opt.style === 'bar') {
    const total = main.reduce((s, p) => s + p.v, 0);
    const busiest = main.reduce((a, b) => (b.v > a.v ? b : a));
    const per = opt.metric === 'battlesPerMonth' ? 'month' : 'day';
    const label = (t: number) => words.date(t, per === 'month' ? 'monthYear' : 'day');
    return [
      { label: words.t('pic.chart.total'), value: fmt(total), color: THEME.trophy },
      { label: words.t(`pic.chart.average.${per}`), value: fmt(Math.round(total / main.length)) },
      { label: words.t(`pic.chart.busiest.${per}`), value: `${fmt(busiest.v)} · ${label(busiest.t)}` },
    ];
  }
  const first = main[0]!;
  const last = main[main.length - 1]!;
  const max = main.reduce((a, b) => (b.v > a.v ? b : a));
  const change = last.v - first.v;
  return [
    { label: words.t('pic.chart.now'), value: fmt(last.v), color: series[0]?.color ?? THEME.trophy },
    { label: words.t('pic.chart.change'), value: fmtSigned(change), color: change > 0 ? THEME.win : change < 0 ? THEME.loss : THEME.text },
    { label: words.t('pic.chart.highest'), value: fmt(max.v) },
    { label: words.t('pic.chart.points'), value: fmt(series.reduce((s, x) => s + x.points.length, 0)) },
  ];
}

function header(ctx: Ctx, W: number, input: ChartInput, title: string, range: string): void {
  drawName(ctx, input.name, 36, 68, { size: 44, color: nameColorToCss(input.nameColor) ?? THEME.text, maxWidth: 640, minSize: 26 });
  drawText(ctx, input.tag, 36, 104, { size: 22, color: THEME.muted, outline: 0.1 });
  drawText(ctx, title, W - 36, 66, { size: 42, color: THEME.trophy, align: 'right', maxWidth: 480, minSize: 20 });
  drawText(ctx, range, W - 36, 100, { size: 20, color: THEME.muted, outline: 0, shadow: false, align: 'right', maxWidth: 480, minSize: 12 });
}

function chartConfig(opt: ChartOption<string>, series: ChartSeries[], from: number, to: number, scale: number, area: { x: number; y: number; w: number; h: number }, W: number, H: number, words: Words): ChartConfiguration {
  const padding = { left: area.x, top: area.y, right: W - area.x - area.w, bottom: H - area.y - area.h };
  // ticks are numbers and dates; legends are series labels: the fonts those characters need
  const sampleDates = `${words.date(from, 'dayMonth')} ${words.date(from, 'shortMonthYear')}`;
  const names = series.map((s) => words.t(`pic.series.${s.label}`));
  const tickFont = { family: fontFamily(`${names.join(' ')} ${sampleDates} 0123456789.,:-`), size: 16 };
  const grid = { color: 'rgba(255,255,255,0.10)', tickColor: 'rgba(255,255,255,0.10)' };
  const yTicks = { color: THEME.muted, font: tickFont, callback: (v: unknown) => fmtCompact(Number(v)), maxTicksLimit: 7 };
  const common = {
    animation: false as const,
    responsive: false,
    devicePixelRatio: scale,
    layout: { padding },
    events: [],
    plugins: {
      legend: {
        display: series.length > 1,
        align: 'end' as const,
        labels: { color: THEME.text, font: { ...tickFont, size: 18 }, boxWidth: 18, boxHeight: 18 },
      },
      tooltip: { enabled: false },
      title: { display: false },
    },
  };
  if (opt.style === 'bar') {
    const main = series[0]?.points ?? [];
    const monthly = opt.metric === 'battlesPerMonth';
    const span = (main.at(-1)?.t ?? to) - (main[0]?.t ?? from);
    return {
      type: 'bar',
      data: {
        labels: main.map((p) => (monthly ? words.date(p.t, 'shortMonthYear') : timeLabel(p.t, Math.max(span, 3 * DAY), words))),
        datasets: [
          {
            label: names[0] ?? '',
            data: main.map((p) => p.v),
            backgroundColor: series[0]?.color ?? THEME.trophy,
            borderColor: THEME.outline,
            borderWidth: main.length > 90 ? 0 : 2,
            borderRadius: main.length > 90 ? 0 : 6,
            categoryPercentage: 0.86,
            barPercentage: main.length > 90 ? 1 : 0.9,
          },
        ],
      },
      options: {
        ...common,
        scales: {
          x: { ticks: { color: THEME.muted, font: tickFont, maxRotation: 0, autoSkip: true, autoSkipPadding: 18 }, grid: { display: false } },
          y: { beginAtZero: true, ticks: { ...yTicks, precision: 0 }, grid },
        },
      },
    } as ChartConfiguration;
  }
  const span = Math.max(1, to - from);
  // A second line (records: the best brawler next to the player) has its own scale on the right:
  // 3,000 next to 130,000 on one axis would be a flat line at the bottom.
  const bounds = (pts: { v: number }[]) => {
    const vs = pts.map((p) => p.v);
    const lo = Math.min(...vs);
    const hi = Math.max(...vs);
    const pad = Math.max(1, (hi - lo) * 0.08, Math.abs(hi) * 0.002);
    // suggested (not hard) bounds: Chart.js still rounds the axis to readable ticks
    return { suggestedMin: lo >= 0 ? Math.max(0, lo - pad) : lo - pad, suggestedMax: hi + pad };
  };
  const axes: Record<string, unknown> = {
    y: { ...bounds(series[0]?.points ?? []), ticks: yTicks, grid },
  };
  if (series.length > 1) {
    const color = series[1]!.color ?? PALETTE[1]!;
    axes.y1 = { position: 'right', ...bounds(series[1]!.points), ticks: { ...yTicks, color }, grid: { display: false } };
  }
  return {
    type: 'line',
    data: {
      datasets: series.map((s, i) => {
        const color = s.color ?? PALETTE[i % PALETTE.length]!;
        return {
          yAxisID: i === 1 ? 'y1' : 'y',
          label: names[i]!,
          data: s.points.map((p) => ({ x: p.t, y: p.v })),
          borderColor: color,
          backgroundColor: i === 0 ? `${color}26` : 'transparent',
          fill: i === 0 && series.length === 1 ? 'start' : false,
          borderWidth: 4,
          pointRadius: s.points.length <= 40 ? 4 : 0,
          pointBackgroundColor: color,
          pointBorderColor: THEME.outline,
          pointBorderWidth: 1.5,
          tension: 0,
          stepped: false,
        };
      }),
    },
    options: {
      ...common,
      parsing: false,
      normalized: true,
      plugins: { ...common.plugins, decimation: { enabled: true, algorithm: 'lttb', samples: Math.round(area.w / 2) } },
      scales: {
        x: {
          type: 'linear',
          min: from,
          max: to,
          ticks: { color: THEME.muted, font: tickFont, maxRotation: 0, maxTicksLimit: 8, callback: (v: unknown) => timeLabel(Number(v), span, words) },
          grid,
        },
        ...axes,
      },
    },
  } as ChartConfiguration;
}

/**
 * Points of the first series that hold something recorded. A bar chart has a bucket for every day
 * (or month) of the period, empty or not: only buckets with battles count, or a quiet September
 * would be "30 recorded points".
 */
export function recordedPoints(opt: ChartOption<string>, series: ChartSeries[]): number {
  const main = series[0]?.points ?? [];
  return opt.style === 'bar' ? main.filter((p) => p.v > 0).length : main.length;
}

/** Enough recorded points to draw (`minPoints` of the option). */
export function hasEnoughData(opt: ChartOption<string>, series: ChartSeries[]): boolean {
  return recordedPoints(opt, series) >= Math.max(1, opt.minPoints);
}

/** What a chart without enough history says instead of a plot; null when it can be drawn. */
export function shortageText(opt: ChartOption<string>, series: ChartSeries[], words: Words = wordsFor()): string | null {
  if (hasEnoughData(opt, series)) return null;
  const n = recordedPoints(opt, series);
  if (n === 0) return words.t(opt.style === 'bar' ? 'pic.chart.noBattles' : 'pic.chart.nothing');
  const what = opt.style === 'bar' ? (opt.metric === 'battlesPerMonth' ? 'months' : 'days') : 'points';
  return words.t(`pic.chart.only.${what}`, { n, min: opt.minPoints });
}

/**
 * Draws a chart picture. `note` is printed under the plot (definitions of derived measures).
 */
export function renderChart(opt: ChartOption<string>, input: ChartInput, quality: Quality, text: { title: string; note?: string }, words: Words): Canvas {
  const { width: W, height: H } = CHART_SIZE;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  background(ctx, W, H);
  const note = text.note;
  const range = words.t('pic.chart.range', { from: words.date(input.from, 'day'), to: words.date(input.to, 'day') });
  header(ctx, W, input, text.title.toLocaleUpperCase(words.lang), range);

  const top = 128;
  const bottom = H - 34 - (note ? 44 : 16);
  const shortage = shortageText(opt, input.series, words);
  if (shortage !== null) {
    emptyState(ctx, 36, top, W - 72, bottom - top, words.t('pic.chart.empty'), shortage);
  } else {
    const chips = summaries(opt, input.series, words);
    const cw = (W - 72) / Math.max(1, chips.length);
    panel(ctx, 36, top, W - 72, 74, { r: 14 });
    chips.forEach((c, i) => {
      const x = 36 + 20 + i * cw;
      drawText(ctx, c.label.toLocaleUpperCase(words.lang), x, top + 28, { size: 15, color: THEME.muted, outline: 0, shadow: false, maxWidth: cw - 24, minSize: 10 });
      drawText(ctx, c.value, x, top + 60, { size: 26, color: c.color ?? THEME.text, maxWidth: cw - 24, minSize: 16 });
    });
    const py = top + 90;
    panel(ctx, 36, py, W - 72, bottom - py, { r: 14 });
    const area = { x: 36 + 14, y: py + 14, w: W - 72 - 28, h: bottom - py - 24 };
    drawPlot(ctx, canvas.width / W, opt, input, area, W, H, words);
  }
  if (note) drawParagraph(ctx, note, 36, H - 34 - 30, { size: 15, width: W - 72, maxLines: 2, color: THEME.faint });
  creditLine(ctx, W, H, `${input.tag} · ${text.title}`, words);
  return canvas;
}

/**
 * Chart.js clears and resizes the canvas it owns, so it draws on a transparent scratch canvas of the
 * same pixel size that is then laid over the frame.
 */
function drawPlot(ctx: Ctx, scale: number, opt: ChartOption<string>, input: ChartInput, area: { x: number; y: number; w: number; h: number }, W: number, H: number, words: Words): void {
  const scratch = createCanvas(W, H);
  const sctx = scratch.getContext('2d');
  const chart = new Chart(sctx as never, chartConfig(opt, input.series, input.from, input.to, scale, area, W, H, words));
  try {
    ctx.save();
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.drawImage(scratch, 0, 0);
    ctx.restore();
  } finally {
    chart.destroy();
    releasePixels(scratch);
  }
}
