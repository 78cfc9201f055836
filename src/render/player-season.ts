/**
 * Player image option 10: season progress — trophies gained since the first profile recorded this
 * season, in total (with the trophy line through the season) and per brawler.
 */
import type { Canvas } from '@napi-rs/canvas';
import { brawlerPortrait, decodeArt } from './art.ts';
import { PLAYER_IMAGE_OPTIONS } from './catalogue.ts';
import {
  background,
  bar,
  creditLine,
  drawParagraph,
  drawText,
  emptyState,
  fmt,
  measure,
  fmtSigned,
  icon,
  makeCanvas,
  panel,
  THEME,
  type Ctx,
  type Quality,
} from './draw.ts';
import { displayName, seasonProgress } from './measures.ts';
import { playerHeader } from './player-card.ts';
import type { PlayerImageInput, Point } from './types.ts';
import type { Words } from './words.ts';

/** A small line chart of the season's trophies, drawn directly (no axes needed at this size). */
function sparkline(ctx: Ctx, points: Point[], x: number, y: number, w: number, h: number, from: number, to: number): void {
  if (points.length < 2) return;
  const vs = points.map((p) => p.v);
  const lo = Math.min(...vs);
  const hi = Math.max(...vs);
  const span = Math.max(1, hi - lo);
  const px = (t: number) => x + ((t - from) / Math.max(1, to - from)) * w;
  const py = (v: number) => y + h - ((v - lo) / span) * h;
  ctx.beginPath();
  points.forEach((p, i) => (i === 0 ? ctx.moveTo(px(p.t), py(p.v)) : ctx.lineTo(px(p.t), py(p.v))));
  ctx.lineTo(px(points[points.length - 1]!.t), y + h);
  ctx.lineTo(px(points[0]!.t), y + h);
  ctx.closePath();
  const g = ctx.createLinearGradient(0, y, 0, y + h);
  g.addColorStop(0, 'rgba(255, 201, 60, 0.35)');
  g.addColorStop(1, 'rgba(255, 201, 60, 0)');
  ctx.fillStyle = g;
  ctx.fill();
  ctx.beginPath();
  points.forEach((p, i) => (i === 0 ? ctx.moveTo(px(p.t), py(p.v)) : ctx.lineTo(px(p.t), py(p.v))));
  ctx.lineJoin = 'round';
  ctx.lineWidth = 4;
  ctx.strokeStyle = THEME.trophy;
  ctx.stroke();
  drawText(ctx, fmt(hi), x + w, y - 6, { size: 15, color: THEME.muted, outline: 0, shadow: false, align: 'right' });
  drawText(ctx, fmt(lo), x + w, y + h + 18, { size: 15, color: THEME.muted, outline: 0, shadow: false, align: 'right' });
}

export function renderSeasonProgress(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const { width: W, height: H } = PLAYER_IMAGE_OPTIONS[10].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const p = input.player;
  background(ctx, W, H, { top: '#1d5aa8', bottom: '#3b1f8f' });
  const season = input.record?.season;
  const window = season ? `${words.date(season.start, 'day')} – ${words.date(season.end - 1, 'day')}` : '';
  playerHeader(ctx, art, p, 36, 30, 760, words, season ? words.upper('pic.season.window', { window }) : undefined);
  drawText(ctx, words.upper('pic.season.title'), W - 40, 70, { size: 40, color: THEME.trophy, align: 'right', maxWidth: 380, minSize: 20 });

  const top = 176;
  const bottom = H - 34 - 46;
  const base = season?.baseline ?? null;
  if (!season || !base) {
    emptyState(
      ctx,
      36,
      top,
      W - 72,
      bottom - top,
      words.t('pic.season.empty'),
      words.t('pic.season.emptyDetail'),
    );
  } else {
    const prog = seasonProgress(p, base);
    // left: the total and the line through the season
    const lw = 430;
    panel(ctx, 36, top, lw, bottom - top);
    drawText(ctx, words.upper('pic.season.trophies'), 60, top + 38, { size: 18, color: THEME.muted, outline: 0, shadow: false, maxWidth: lw - 48, minSize: 11 });
    icon(ctx, 'trophy', 90, top + 88, 56);
    drawText(ctx, fmtSigned(prog.total), 130, top + 110, {
      size: 66,
      color: prog.total > 0 ? THEME.win : prog.total < 0 ? THEME.loss : THEME.text,
      maxWidth: lw - 110,
      minSize: 36,
    });
    drawText(ctx, `${fmt(base.trophies)} → ${fmt(p.trophies)}`, 60, top + 150, { size: 24, maxWidth: lw - 48 });
    drawText(ctx, words.t('pic.season.firstRecorded', { date: words.date(base.at, 'day') }), 60, top + 178, { size: 17, color: THEME.muted, outline: 0, shadow: false, maxWidth: lw - 48, minSize: 11 });
    const pts = season.trophies.filter((q) => q.t >= season.start && q.t < season.end);
    if (pts.length >= 2) {
      sparkline(ctx, pts, 60, top + 218, lw - 60, bottom - top - 260, season.start, Math.max(pts[pts.length - 1]!.t, season.start + 1));
    } else {
      drawParagraph(ctx, words.t('pic.season.lineLater'), 60, top + 240, { size: 17, width: lw - 48, maxLines: 4 });
    }

    // right: per-brawler gains
    const rx = 36 + lw + 20;
    const rw = W - 36 - rx;
    panel(ctx, rx, top, rw, bottom - top);
    const gained = prog.brawlers.filter((b) => b.gained > 0);
    const lost = prog.brawlers.filter((b) => b.gained < 0);
    const same = prog.brawlers.length - gained.length - lost.length;
    const byBrawler = words.upper('pic.season.byBrawler');
    const byWidth = Math.min(measure(ctx, byBrawler, 18), rw * 0.4);
    drawText(ctx, byBrawler, rx + 24, top + 38, { size: 18, color: THEME.muted, outline: 0, shadow: false, maxWidth: rw * 0.4, minSize: 11 });
    drawText(ctx, words.t('pic.season.moves', { up: gained.length, down: lost.length, same }), rx + rw - 24, top + 38, {
      size: 18,
      color: THEME.muted,
      outline: 0,
      shadow: false,
      align: 'right',
      maxWidth: rw - 48 - byWidth - 20,
      minSize: 11,
    });
    const shown = [...gained.slice(0, 12), ...lost.slice(-Math.max(0, 16 - Math.min(12, gained.length))).reverse()].slice(0, 16);
    const maxAbs = Math.max(1, ...shown.map((b) => Math.abs(b.gained)));
    const rowH = Math.min(48, (bottom - top - 64) / Math.max(1, Math.ceil(shown.length / 2)));
    const colW = (rw - 48) / 2;
    shown.forEach((b, i) => {
      const cx = rx + 24 + Math.floor(i / Math.ceil(shown.length / 2)) * (colW + 0);
      const cy = top + 56 + (i % Math.ceil(shown.length / 2)) * rowH;
      const ps = rowH - 8;
      brawlerPortrait(ctx, art, b.brawler, cx, cy, ps);
      drawText(ctx, displayName(b.brawler.name), cx + ps + 10, cy + ps * 0.45, { size: 16, maxWidth: colW - ps - 100, minSize: 11 });
      bar(ctx, cx + ps + 10, cy + ps * 0.62, colW - ps - 110, 9, Math.abs(b.gained) / maxAbs, b.gained >= 0 ? THEME.win : THEME.loss);
      drawText(ctx, fmtSigned(b.gained), cx + colW - 16, cy + ps * 0.78, {
        size: 22,
        color: b.gained >= 0 ? THEME.win : THEME.loss,
        align: 'right',
      });
    });
    if (shown.length === 0) {
      drawText(ctx, words.t('pic.season.noMoves'), rx + rw / 2, top + (bottom - top) / 2, { size: 24, align: 'center', maxWidth: rw - 48, minSize: 14 });
    }
  }
  drawParagraph(ctx, words.t('pic.season.definition'), 36, H - 34 - 22, { size: 15, width: W - 72, maxLines: 1, color: THEME.faint });
  creditLine(ctx, W, H, words.t('pic.footer.season', { tag: p.tag }), words);
  return canvas;
}
