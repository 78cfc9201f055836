/**
 * Player images about the brawler roster: option 3 (detailed grid) and the sorted lists
 * 4 (ranks), 41 (old ranks), 6 (mastery, historic), 8 (trophies), 9 (highest trophies),
 * 13 (highest recorded win rate) and 14 (current win rate).
 */
import type { Canvas } from '@napi-rs/canvas';
import { nameColorToCss } from '../upstream/api-format.ts';
import type { Player, PlayerBrawler } from '../upstream/schemas.ts';
import { brawlerPortrait, decodeArt, playerIcon, type ArtImages } from './art.ts';
import { PLAYER_IMAGE_OPTIONS } from './catalogue.ts';
import {
  background,
  bar,
  creditLine,
  drawName,
  drawParagraph,
  drawText,
  emptyState,
  fitGrid,
  fmt,
  fmtDate,
  fmtPercent,
  icon,
  makeCanvas,
  measure,
  panel,
  roundRect,
  THEME,
  type Ctx,
  type IconName,
  type Quality,
} from './draw.ts';
import {
  currentWinRate,
  DEFINITIONS,
  displayName,
  highestWinRate,
  masteryOf,
  OLD_RANK_MAX,
  oldRank,
  oldRankColor,
  oldRankNext,
  oldRankProgress,
  rankColor,
  winsOf,
  type WinRate,
} from './measures.ts';
import type { PlayerImageInput } from './types.ts';
import type { Words } from './words.ts';

/** Compact header of the roster pictures: icon, name, tag on the left; title and summary on the right. */
function rosterHeader(ctx: Ctx, art: ArtImages, p: Player, W: number, title: string, summary: string): void {
  playerIcon(ctx, art, p.icon?.id, p.name, 32, 24, 84);
  drawName(ctx, p.name, 134, 66, { size: 40, color: nameColorToCss(p.nameColor) ?? THEME.text, maxWidth: W * 0.5 - 134, minSize: 24 });
  drawText(ctx, p.tag, 134, 100, { size: 21, color: THEME.muted, outline: 0.1 });
  drawText(ctx, title.toUpperCase(), W - 34, 64, { size: 40, color: THEME.trophy, align: 'right', maxWidth: W * 0.48, minSize: 20 });
  drawText(ctx, summary, W - 34, 98, { size: 20, color: THEME.muted, outline: 0, shadow: false, align: 'right', maxWidth: W * 0.5, minSize: 12 });
}

// ------------------------------------------------------------------ option 3: detailed grid

/** A small rounded label; `x` is its left edge, or its right edge with `right`. Returns its width. */
function chip(ctx: Ctx, x: number, y: number, h: number, text: string, color: string, right = false): number {
  const w = measure(ctx, text, h * 0.72) + h * 0.6;
  if (right) x -= w;
  roundRect(ctx, x, y, w, h, h * 0.3);
  ctx.fillStyle = color;
  ctx.fill();
  ctx.lineWidth = 1.5;
  ctx.strokeStyle = THEME.outline;
  ctx.stroke();
  drawText(ctx, text, x + w / 2, y + h * 0.78, { size: h * 0.72, align: 'center', outline: 0.16, shadow: false });
  return w;
}

/** Icons with counts for one kind of upgrade; the icon is dimmed when the brawler has none. */
function upgrade(ctx: Ctx, kind: IconName, count: number, x: number, y: number, s: number): number {
  ctx.save();
  if (count === 0) ctx.globalAlpha = 0.25;
  icon(ctx, kind, x + s / 2, y, s);
  ctx.restore();
  if (count > 1) drawText(ctx, String(count), x + s * 0.78, y + s * 0.5, { size: s * 0.62, outline: 0.2, shadow: false });
  return s * (count > 1 ? 1.35 : 1.1);
}

export function renderBrawlerDetails(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const { width: W, height: H } = PLAYER_IMAGE_OPTIONS[3].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const p = input.player;
  background(ctx, W, H);
  const brawlers = [...p.brawlers].sort((a, b) => b.trophies - a.trophies || a.id - b.id);
  const maxed = brawlers.filter((b) => b.power >= 11).length;
  rosterHeader(ctx, art, p, W, words.t('pic.brawlers'), words.t('pic.grid.detailsSummary', { n: brawlers.length, maxed, trophies: fmt(p.trophies) }));

  const gx = 28;
  const gy = 130;
  const gw = W - 56;
  const gh = H - 34 - 12 - gy;
  if (brawlers.length === 0) {
    emptyState(ctx, gx, gy, gw, gh, words.t('pic.grid.none'), words.t('pic.grid.noneDetail'));
    creditLine(ctx, W, H, words.t('pic.footer.brawlers', { tag: p.tag }), words);
    return canvas;
  }
  const g = fitGrid(brawlers.length, gw, gh, 2.6, 150);
  const maxRank = Math.max(1, ...brawlers.map((b) => b.rank));
  brawlers.forEach((b, i) => {
    const x = gx + (i % g.cols) * g.tw;
    const y = gy + Math.floor(i / g.cols) * g.th;
    const tw = g.tw - 8;
    const th = g.th - 8;
    panel(ctx, x, y, tw, th, { r: 10 });
    const ps = Math.min(th - 12, tw * 0.4);
    brawlerPortrait(ctx, art, b, x + 6, y + 6, ps);
    // power on the portrait's corner, like the game's level bubble
    chip(ctx, x + 4, y + 6 + ps - th * 0.2, th * 0.24, `P${b.power}`, THEME.power);
    const tx = x + ps + 14;
    const cw = tw - ps - 20;
    const s = th / 86;
    drawText(ctx, displayName(b.name), tx, y + 24 * s, { size: 17 * s, maxWidth: cw, minSize: 12.5 * s, outline: 0.12 });
    const rw = chip(ctx, tx + cw, y + 33 * s, 18 * s, `R${b.rank}`, rankColor(b.rank, maxRank), true);
    icon(ctx, 'trophy', tx + 9 * s, y + 42 * s, 18 * s);
    drawText(ctx, fmt(b.trophies), tx + 22 * s, y + 50 * s, { size: 21 * s, color: THEME.trophy, maxWidth: cw - 26 * s - rw, minSize: 12 * s });
    let ux = tx;
    const uy = y + 68 * s;
    const us = 17 * s;
    ux += upgrade(ctx, 'gadget', b.gadgets.length, ux, uy, us);
    ux += upgrade(ctx, 'starPower', b.starPowers.length, ux, uy, us);
    ux += upgrade(ctx, 'gear', b.gears.length, ux, uy, us);
    upgrade(ctx, 'hyper', b.hyperCharges?.length ?? 0, ux, uy, us);
  });
  creditLine(ctx, W, H, words.t('pic.footer.details', { tag: p.tag }), words);
  return canvas;
}

// ------------------------------------------------------------------ sorted lists

export interface ListItem {
  brawler: { id: number; name: string };
  value: string;
  valueColor?: string;
  valueIcon?: IconName;
  secondary?: string;
  /** progress bar under the text, 0..1 */
  ratio?: number;
  barColor?: string;
  /** a coloured badge on the portrait (rank, tier) */
  badge?: { text: string; color: string };
}

export interface ListSpec {
  title: string;
  summary: string;
  items: ListItem[];
  note?: string;
  empty?: { title: string; detail: string };
  footer: string;
}

export function renderBrawlerList(input: PlayerImageInput, quality: Quality, words: Words, spec: ListSpec, size = PLAYER_IMAGE_OPTIONS[8].size): Canvas {
  const { width: W, height: H } = size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const p = input.player;
  background(ctx, W, H);
  rosterHeader(ctx, art, p, W, spec.title, spec.summary);
  const gx = 28;
  const gy = 128;
  const gw = W - 56;
  const bottom = H - 34 - (spec.note ? 46 : 12);
  const gh = bottom - gy;
  if (spec.items.length === 0) {
    emptyState(ctx, gx, gy, gw, gh, spec.empty?.title ?? words.t('pic.grid.none'), spec.empty?.detail ?? '');
  } else {
    const g = fitGrid(spec.items.length, gw, gh, 2.3, 120);
    spec.items.forEach((item, i) => {
      const x = gx + (i % g.cols) * g.tw;
      const y = gy + Math.floor(i / g.cols) * g.th;
      const tw = g.tw - 6;
      const th = g.th - 6;
      // text scales with the tile up to a point; beyond it big tiles get air, not huge letters
      const s = Math.min(th / 70, 1.25);
      panel(ctx, x, y, tw, th, { r: Math.min(12, 9 * s) });
      const ps = Math.min(th - 10, tw * 0.34);
      const py = y + (th - ps) / 2;
      brawlerPortrait(ctx, art, item.brawler, x + 5, py, ps);
      if (item.badge) {
        const bs = 22 * s;
        roundRect(ctx, x + 5 + ps - bs * 0.6, py + ps - bs * 0.5, bs * 1.05, bs, bs * 0.3);
        ctx.fillStyle = item.badge.color;
        ctx.fill();
        ctx.lineWidth = 1.5;
        ctx.strokeStyle = THEME.outline;
        ctx.stroke();
        drawText(ctx, item.badge.text, x + 5 + ps - bs * 0.075, py + ps + bs * 0.25, { size: 15 * s, align: 'center', outline: 0.2, shadow: false, maxWidth: bs, minSize: 8 * s });
      }
      const tx = x + 5 + ps + 10 * s;
      const cw = tw - ps - 5 - 16 * s;
      const ty = y + (th - 66 * s) / 2;
      drawText(ctx, displayName(item.brawler.name), tx, ty + 17 * s, { size: 15 * s, maxWidth: cw, minSize: 9 * s, outline: 0.12 });
      let vx = tx;
      if (item.valueIcon) {
        icon(ctx, item.valueIcon, tx + 8 * s, ty + 33 * s, 16 * s);
        vx += 19 * s;
      }
      drawText(ctx, item.value, vx, ty + 40 * s, { size: 20 * s, color: item.valueColor ?? THEME.text, maxWidth: cw - (vx - tx), minSize: 10 * s });
      if (item.ratio !== undefined) {
        bar(ctx, tx, ty + 46 * s, cw, 7 * s, item.ratio, item.barColor ?? THEME.win);
        if (item.secondary) drawText(ctx, item.secondary, tx, ty + 65 * s, { size: 12 * s, color: THEME.muted, outline: 0, shadow: false, maxWidth: cw, minSize: 10 * s });
      } else if (item.secondary) {
        drawText(ctx, item.secondary, tx, ty + 60 * s, { size: 13 * s, color: THEME.muted, outline: 0, shadow: false, maxWidth: cw, minSize: 8 * s });
      }
    });
  }
  if (spec.note) drawParagraph(ctx, spec.note, 28, H - 34 - 30, { size: 15, width: W - 56, maxLines: 2, color: THEME.faint });
  creditLine(ctx, W, H, spec.footer, words);
  return canvas;
}

const byTrophies = (a: PlayerBrawler, b: PlayerBrawler) => b.trophies - a.trophies || a.id - b.id;

function average(xs: number[]): number {
  return xs.length ? xs.reduce((s, x) => s + x, 0) / xs.length : 0;
}

export function renderTrophies(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const p = input.player;
  const items = [...p.brawlers].sort(byTrophies).map<ListItem>((b) => ({
    brawler: b,
    value: fmt(b.trophies),
    valueIcon: 'trophy',
    valueColor: THEME.trophy,
    secondary: words.tile('pic.grid.bestPower', { best: fmt(b.highestTrophies), power: b.power }),
  }));
  return renderBrawlerList(input, quality, words, {
    title: words.t('pic.grid.title.8'),
    summary: words.t('pic.grid.trophiesSummary', { n: p.brawlers.length, trophies: fmt(p.trophies), average: fmt(Math.round(average(p.brawlers.map((b) => b.trophies)))) }),
    items,
    empty: { title: words.t('pic.grid.none'), detail: words.t('pic.grid.noneDetail') },
    footer: words.t('pic.footer.8', { tag: p.tag }),
  });
}

export function renderHighestTrophies(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const p = input.player;
  const items = [...p.brawlers]
    .sort((a, b) => b.highestTrophies - a.highestTrophies || a.id - b.id)
    .map<ListItem>((b) => ({
      brawler: b,
      value: fmt(b.highestTrophies),
      valueIcon: 'trophy',
      valueColor: THEME.trophy,
      secondary: words.tile('pic.grid.nowPower', { now: fmt(b.trophies), power: b.power }),
    }));
  const sum = p.brawlers.reduce((s, b) => s + b.highestTrophies, 0);
  return renderBrawlerList(input, quality, words, {
    title: words.t('pic.grid.title.9'),
    summary: words.t('pic.grid.highestSummary', { n: p.brawlers.length, best: fmt(Math.max(0, ...p.brawlers.map((b) => b.highestTrophies))), sum: fmt(sum) }),
    items,
    empty: { title: words.t('pic.grid.none'), detail: words.t('pic.grid.noneDetail') },
    footer: words.t('pic.footer.9', { tag: p.tag }),
  });
}

export function renderRanks(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const p = input.player;
  const maxRank = Math.max(1, ...p.brawlers.map((b) => b.rank));
  const items = [...p.brawlers]
    .sort((a, b) => b.rank - a.rank || byTrophies(a, b))
    .map<ListItem>((b) => ({
      brawler: b,
      value: words.tile('pic.grid.rank', { rank: b.rank }),
      valueColor: rankColor(b.rank, maxRank),
      badge: { text: String(b.rank), color: rankColor(b.rank, maxRank) },
      secondary: words.tile('pic.grid.trophies', { n: fmt(b.trophies) }),
    }));
  return renderBrawlerList(input, quality, words, {
    title: words.t('pic.grid.title.4'),
    summary: words.t('pic.grid.ranksSummary', { n: p.brawlers.length, max: maxRank, average: average(p.brawlers.map((b) => b.rank)).toFixed(1) }),
    items,
    empty: { title: words.t('pic.grid.none'), detail: words.t('pic.grid.noneDetail') },
    footer: words.t('pic.footer.4', { tag: p.tag }),
  });
}

export function renderOldRanks(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const p = input.player;
  const ranked = p.brawlers.map((b) => ({ b, r: oldRank(b.highestTrophies) }));
  const items = ranked
    .sort((x, y) => y.r - x.r || y.b.highestTrophies - x.b.highestTrophies || x.b.id - y.b.id)
    .map<ListItem>(({ b, r }) => {
      const next = oldRankNext(b.highestTrophies);
      return {
        brawler: b,
        value: words.tile('pic.grid.rank', { rank: r }),
        valueColor: oldRankColor(r),
        badge: { text: String(r), color: oldRankColor(r) },
        ratio: oldRankProgress(b.highestTrophies),
        barColor: oldRankColor(r),
        secondary:
          next === null
            ? words.tile('pic.grid.topRank', { best: fmt(b.highestTrophies) })
            : words.tile('pic.grid.toNext', { left: fmt(next), next: r + 1, best: fmt(b.highestTrophies) }),
      };
    });
  const top = ranked.filter((x) => x.r === OLD_RANK_MAX).length;
  return renderBrawlerList(input, quality, words, {
    title: words.t('pic.grid.title.41'),
    summary: words.t('pic.grid.oldSummary', { n: top, max: OLD_RANK_MAX, average: average(ranked.map((x) => x.r)).toFixed(1) }),
    items,
    note: words.t('pic.note.oldRanks'),
    empty: { title: words.t('pic.grid.none'), detail: words.t('pic.grid.noneDetail') },
    footer: words.t('pic.footer.41', { tag: p.tag }),
  });
}

function recordsNote(input: PlayerImageInput, words: Words): string {
  const since = input.record?.since;
  return since ? words.t('pic.grid.recordedSince', { date: words.date(since, 'day') }) : words.t('pic.grid.nothingRecorded');
}

export function renderMastery(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const p = input.player;
  const records = (input.record?.brawlers ?? []).map((r) => ({ r, m: masteryOf(winsOf(r)) })).filter((x) => x.m.wins > 0);
  const items = records
    .sort((a, b) => b.m.wins - a.m.wins || a.r.id - b.r.id)
    .map<ListItem>(({ r, m }) => ({
      brawler: { id: r.id, name: r.name },
      value: m.family ? words.tile(`pic.mastery.${m.family}`, { level: m.level ?? '' }) : words.tile('pic.mastery.unranked'),
      valueColor: m.color,
      badge: m.level ? { text: m.level, color: m.color } : undefined,
      ratio: m.progress,
      barColor: m.color,
      secondary: m.nextAt === null ? words.tile('pic.grid.winsTop', { wins: fmt(m.wins) }) : words.tile('pic.grid.winsOf', { wins: fmt(m.wins), next: fmt(m.nextAt) }),
    }));
  const total = records.reduce((s, x) => s + x.m.wins, 0);
  return renderBrawlerList(input, quality, words, {
    title: words.t('pic.grid.title.6'),
    summary: words.t('pic.grid.masterySummary', { wins: fmt(total), n: records.length, recorded: recordsNote(input, words) }),
    items,
    note: words.t('pic.note.mastery'),
    empty: { title: words.t('pic.grid.noWins'), detail: words.t('pic.grid.noWinsDetail') },
    footer: words.t('pic.footer.6', { tag: p.tag }),
  });
}

function winRateList(input: PlayerImageInput, quality: Quality, which: 'highest' | 'current', words: Words): Canvas {
  const p = input.player;
  const measure = which === 'highest' ? highestWinRate : currentWinRate;
  const rated = (input.record?.brawlers ?? [])
    .map((r) => ({ r, w: measure(r.results) }))
    .filter((x): x is { r: (typeof x)['r']; w: WinRate } => x.w !== null)
    .sort((a, b) => b.w.rate - a.w.rate || b.w.battles - a.w.battles || a.r.id - b.r.id);
  const items = rated.map<ListItem>(({ r, w }) => ({
    brawler: { id: r.id, name: r.name },
    value: fmtPercent(w.rate),
    valueColor: w.rate >= 0.6 ? THEME.win : w.rate >= 0.45 ? THEME.trophy : THEME.loss,
    ratio: w.rate,
    barColor: w.rate >= 0.6 ? THEME.win : w.rate >= 0.45 ? THEME.trophy : THEME.loss,
    secondary: words.tile('pic.grid.wonOf', { wins: w.wins, battles: w.battles, recorded: r.results.length }),
  }));
  const battles = (input.record?.brawlers ?? []).reduce((s, r) => s + r.results.length, 0);
  return renderBrawlerList(input, quality, words, {
    title: words.t(which === 'highest' ? 'pic.grid.title.13' : 'pic.grid.title.14'),
    summary: words.t('pic.grid.winRateSummary', { n: rated.length, battles: fmt(battles), recorded: recordsNote(input, words) }),
    items,
    note: words.t('pic.note.winRate'),
    empty: { title: words.t('pic.grid.noRates'), detail: words.t('pic.grid.noRatesDetail') },
    footer: words.t(which === 'highest' ? 'pic.footer.13' : 'pic.footer.14', { tag: p.tag }),
  });
}

export const renderHighestWinRates = (input: PlayerImageInput, quality: Quality, words: Words): Canvas => winRateList(input, quality, 'highest', words);
export const renderCurrentWinRates = (input: PlayerImageInput, quality: Quality, words: Words): Canvas => winRateList(input, quality, 'current', words);
