/**
 * Player image option 1: the classic profile card.
 */
import type { Canvas } from '@napi-rs/canvas';
import { nameColorToCss, playerClub } from '../upstream/api-format.ts';
import type { Player } from '../upstream/schemas.ts';
import { brawlerPortrait, clubBadge, decodeArt, playerIcon, tagNumber, type ArtImages } from './art.ts';
import {
  background,
  creditLine,
  drawName,
  drawText,
  fmt,
  icon,
  makeCanvas,
  panel,
  statBlock,
  THEME,
  type Ctx,
  type Quality,
} from './draw.ts';
import type { PlayerImageInput } from './types.ts';
import type { Words } from './words.ts';
import { displayName, prestigeOf } from './measures.ts';

export const CLASSIC_SIZE = { width: 1200, height: 675 } as const;

/** Header shared by the player pictures: icon with level star, coloured name, tag, club. */
export function playerHeader(ctx: Ctx, art: ArtImages, p: Player, x: number, y: number, w: number, words: Words, subtitle?: string): void {
  const s = 112;
  playerIcon(ctx, art, p.icon?.id, p.name, x, y, s);
  icon(ctx, 'xp', x + s - 6, y + s - 8, 50);
  drawText(ctx, String(p.expLevel), x + s - 6, y + s + 1, { size: 20, align: 'center', outline: 0.2, maxWidth: 44, minSize: 12 });
  const tx = x + s + 26;
  drawName(ctx, p.name, tx, y + 52, { size: 52, color: nameColorToCss(p.nameColor) ?? THEME.text, maxWidth: w - (tx - x), minSize: 30 });
  const club = playerClub(p);
  let cx = tx;
  cx += drawText(ctx, p.tag, cx, y + 90, { size: 24, color: THEME.muted, outline: 0.1 }) + 22;
  if (club) {
    clubBadge(ctx, art, tagNumber(club.tag), club.name, cx, y + 66, 30);
    drawName(ctx, club.name, cx + 38, y + 90, { size: 24, maxWidth: w - (cx + 38 - x), minSize: 16 });
  } else {
    drawText(ctx, words.t('pic.noClub'), cx, y + 90, { size: 24, color: THEME.faint, outline: 0.1, maxWidth: w - (cx - x), minSize: 16 });
  }
  if (subtitle) drawText(ctx, subtitle, tx, y + 124, { size: 20, color: THEME.trophy, outline: 0.12, maxWidth: w - (tx - x) });
}

export function renderPlayerClassic(input: PlayerImageInput, quality: Quality, words: Words): Canvas {
  const { width: W, height: H } = CLASSIC_SIZE;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const p = input.player;
  background(ctx, W, H);

  playerHeader(ctx, art, p, 36, 30, 760, words);

  // trophies, top right: the number players care about most
  drawText(ctx, words.upper('pic.trophies'), W - 40, 60, { size: 20, color: THEME.muted, outline: 0, shadow: false, align: 'right', maxWidth: 340, minSize: 14 });
  const tw = drawText(ctx, fmt(p.trophies), W - 40, 124, { size: 64, color: THEME.trophy, align: 'right' });
  icon(ctx, 'trophy', W - 40 - tw - 38, 100, 56);

  // stats
  const sx = 36;
  const sy = 176;
  const sw = W - 72;
  panel(ctx, sx, sy, sw, 206);
  const col = (sw - 40) / 4;
  const brawlerCount = p.brawlers.length;
  const cells: [string, string, Parameters<typeof statBlock>[6]][] = [
    [words.t('pic.highestTrophies'), fmt(p.highestTrophies), { icon: 'trophy', color: THEME.trophy }],
    [words.t('pic.prestige'), fmt(prestigeOf(p)), { icon: 'crown', color: THEME.prestige }],
    [words.t('pic.expLevel'), fmt(p.expLevel), { icon: 'xp', color: THEME.xp }],
    [words.t('pic.brawlers'), fmt(brawlerCount), { icon: 'people' }],
    [words.t('pic.wins3v3'), fmt(p['3vs3Victories']), { icon: 'star', color: THEME.win }],
    [words.t('pic.winsSolo'), fmt(p.soloVictories), { icon: 'skull', color: THEME.win }],
    [words.t('pic.winsDuo'), fmt(p.duoVictories), { icon: 'people', color: THEME.win }],
    [words.t('pic.bestStreak'), fmt(Math.max(0, ...p.brawlers.map((b) => b.maxWinStreak ?? 0))), { icon: 'flame' }],
  ];
  cells.forEach(([label, value, opts], i) => {
    statBlock(ctx, sx + 24 + (i % 4) * col, sy + 36 + Math.floor(i / 4) * 96, col - 20, label, value, { ...opts, size: 36 });
  });

  // best brawlers
  const by = sy + 228;
  const bh = H - 34 - 18 - by;
  panel(ctx, sx, by, sw, bh);
  drawText(ctx, words.upper('pic.bestBrawlers'), sx + 24, by + 34, { size: 22, color: THEME.muted, outline: 0, shadow: false, maxWidth: sw - 48, minSize: 14 });
  const best = [...p.brawlers].sort((a, b) => b.trophies - a.trophies || a.id - b.id).slice(0, 5);
  const cw = (sw - 40) / 5;
  best.forEach((b, i) => {
    const x = sx + 20 + i * cw;
    const y = by + 52;
    const ps = 92;
    brawlerPortrait(ctx, art, { id: b.id, name: b.name }, x + 6, y, ps);
    const tx = x + ps + 18;
    const tw2 = cw - ps - 26;
    drawText(ctx, displayName(b.name), tx, y + 24, { size: 22, maxWidth: tw2, minSize: 14 });
    icon(ctx, 'trophy', tx + 11, y + 46, 22);
    drawText(ctx, fmt(b.trophies), tx + 28, y + 54, { size: 24, color: THEME.trophy, maxWidth: tw2 - 28, minSize: 14 });
    drawText(ctx, words.tile('pic.power', { n: b.power }).toLocaleUpperCase(words.lang), tx, y + 84, { size: 17, color: THEME.power, outline: 0.12, maxWidth: tw2, minSize: 10 });
    drawText(ctx, words.tile('pic.best', { n: fmt(b.highestTrophies) }), x + 6, y + ps + 32, { size: 18, color: THEME.muted, outline: 0.1, maxWidth: cw - 12, minSize: 11 });
  });
  if (best.length === 0) drawText(ctx, words.t('pic.noBrawlersYet'), sx + sw / 2, by + bh / 2 + 10, { size: 28, align: 'center', maxWidth: sw - 48, minSize: 16 });

  creditLine(ctx, W, H, words.t('pic.footer.profile', { tag: p.tag }), words);
  return canvas;
}
