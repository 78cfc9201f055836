/**
 * Club images: option 2 (classic card, landscape) and 200 (the same in portrait format).
 */
import type { Canvas } from '@napi-rs/canvas';
import { nameColorToCss } from '../upstream/api-format.ts';
import type { Club, ClubMember } from '../upstream/schemas.ts';
import { clubBadge, decodeArt, playerIcon, type ArtImages } from './art.ts';
import { CLUB_IMAGE_OPTIONS, CLUB_SIZE } from './catalogue.ts';
import {
  background,
  creditLine,
  drawName,
  drawParagraph,
  drawText,
  fmt,
  icon,
  makeCanvas,
  measure,
  panel,
  roundRect,
  statBlock,
  THEME,
  type Ctx,
  type Quality,
} from './draw.ts';
import { plainName } from './markup.ts';
import type { ClubImageInput } from './types.ts';
import type { Words } from './words.ts';

/** Role colours; the role's name is the game's word in the reader's language (club.role.*). */
const ROLE_COLOUR: Record<string, string> = {
  president: THEME.trophy,
  vicePresident: '#ff9a3a',
  senior: '#5fd3ff',
  member: THEME.muted,
};

const TYPES = ['open', 'inviteOnly', 'closed'];

/** Human words for an open enum value we do not know: `someNewRole` → "Some new role". */
function spelled(s: string): string {
  const w = s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
}

export function roleOf(role: string, words: Words): { label: string; color: string } {
  const colour = ROLE_COLOUR[role];
  return colour ? { label: words.t(`club.role.${role}`), color: colour } : { label: spelled(role), color: THEME.muted };
}

export function clubTypeLabel(type: string, words: Words): string {
  return TYPES.includes(type) ? words.t(`club.kind.${type}`) : spelled(type);
}

/** Members as the game lists them: trophies, highest first. */
function sortedMembers(club: Club): ClubMember[] {
  return [...club.members].sort((a, b) => b.trophies - a.trophies || a.tag.localeCompare(b.tag));
}

function typeChip(ctx: Ctx, x: number, y: number, club: Club, words: Words): number {
  const text = clubTypeLabel(club.type, words).toLocaleUpperCase(words.lang);
  const w = measure(ctx, text, 16) + 22;
  roundRect(ctx, x, y - 20, w, 28, 10);
  ctx.fillStyle = club.type === 'open' ? '#2f9e4f' : club.type === 'closed' ? '#b8423f' : '#8a5cd6';
  ctx.fill();
  ctx.lineWidth = 2;
  ctx.strokeStyle = THEME.outline;
  ctx.stroke();
  drawText(ctx, text, x + w / 2, y, { size: 16, align: 'center', outline: 0.16, shadow: false });
  return w;
}

function memberRow(ctx: Ctx, art: ArtImages, m: ClubMember, pos: number, x: number, y: number, w: number, h: number, words: Words): void {
  const role = roleOf(m.role, words);
  const is = h - 8;
  drawText(ctx, String(pos), x + 18, y + h / 2 + 7, { size: 18, color: THEME.muted, outline: 0, shadow: false, align: 'center' });
  playerIcon(ctx, art, m.icon?.id, plainName(m.name), x + 36, y + 4, is);
  const tx = x + 36 + is + 10;
  const trophies = fmt(m.trophies);
  const tw = measure(ctx, trophies, 19) + 26;
  const nameColor = nameColorToCss(m.nameColor) ?? THEME.text;
  if (w < 520) {
    // narrow column: name, then role under it
    drawName(ctx, m.name, tx, y + h * 0.5, { size: 19, color: nameColor, maxWidth: w - (tx - x) - tw - 8, minSize: 13, outline: 0.12 });
    drawText(ctx, role.label, tx, y + h * 0.5 + 16, { size: 13.5, color: role.color, outline: 0, shadow: false, maxWidth: w - (tx - x) - tw - 28, minSize: 9 });
    if (m.role === 'president') icon(ctx, 'crown', tx + measure(ctx, role.label, 13.5) + 12, y + h * 0.5 + 11, 14);
  } else {
    // wide row: name, role in its own column before the trophies
    const roleW = 130;
    drawName(ctx, m.name, tx, y + h / 2 + 7, { size: 19, color: nameColor, maxWidth: w - (tx - x) - tw - roleW - 12, minSize: 13, outline: 0.12 });
    // a fixed column, so roles line up whatever the trophy counts are
    const rx = x + w - 140 - roleW;
    if (m.role === 'president') icon(ctx, 'crown', rx - 12, y + h / 2 + 1, 16);
    drawText(ctx, role.label, rx, y + h / 2 + 6, { size: 16, color: role.color, outline: 0, shadow: false, maxWidth: roleW - 8, minSize: 10 });
  }
  icon(ctx, 'trophy', x + w - tw + 9, y + h / 2 - 1, 18);
  drawText(ctx, trophies, x + w - 4, y + h / 2 + 7, { size: 19, color: THEME.trophy, align: 'right', outline: 0.12 });
}

function membersPanel(ctx: Ctx, art: ArtImages, club: Club, x: number, y: number, w: number, h: number, cols: number, words: Words): void {
  panel(ctx, x, y, w, h);
  const members = sortedMembers(club);
  drawText(ctx, words.upper('pic.membersCount', { n: members.length, max: CLUB_SIZE }), x + 22, y + 32, { size: 19, color: THEME.muted, outline: 0, shadow: false, maxWidth: w - 44, minSize: 12 });
  if (members.length === 0) {
    drawText(ctx, words.t('club.empty'), x + w / 2, y + h / 2, { size: 26, align: 'center', maxWidth: w - 40, minSize: 16 });
    return;
  }
  const perCol = Math.ceil(Math.max(members.length, cols * 10) / cols);
  const rowH = Math.min(48, (h - 50) / perCol);
  const colW = (w - 24) / cols;
  members.forEach((m, i) => {
    const c = Math.floor(i / perCol);
    const r = i % perCol;
    const rx = x + 12 + c * colW;
    const ry = y + 44 + r * rowH;
    if (r % 2 === 0) {
      roundRect(ctx, rx, ry, colW - 8, rowH, 8);
      ctx.fillStyle = 'rgba(255, 255, 255, 0.04)';
      ctx.fill();
    }
    memberRow(ctx, art, m, i + 1, rx, ry, colW - 16, rowH, words);
  });
}

export function renderClubClassic(input: ClubImageInput, quality: Quality, words: Words): Canvas {
  const { width: W, height: H } = CLUB_IMAGE_OPTIONS[2].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const club = input.club;
  background(ctx, W, H, { top: '#2a3fb0', bottom: '#5a1d7d' });
  clubBadge(ctx, art, club.badgeId, club.name, 36, 26, 112);
  drawName(ctx, club.name, 168, 72, { size: 48, maxWidth: 600, minSize: 28 });
  let cx = 168;
  cx += drawText(ctx, club.tag, cx, 108, { size: 22, color: THEME.muted, outline: 0.1 }) + 16;
  typeChip(ctx, cx, 106, club, words);
  drawParagraph(ctx, club.description?.trim() || words.t('pic.noDescription'), 168, 140, { size: 17, width: 640, maxLines: 2, color: THEME.text });

  // right: the club's numbers
  drawText(ctx, words.upper('pic.totalTrophies'), W - 40, 52, { size: 18, color: THEME.muted, outline: 0, shadow: false, align: 'right', maxWidth: 340, minSize: 12 });
  const tw = drawText(ctx, fmt(club.trophies), W - 40, 106, { size: 52, color: THEME.trophy, align: 'right' });
  icon(ctx, 'trophy', W - 40 - tw - 30, 86, 46);
  drawText(ctx, words.t('pic.requiredN', { n: fmt(club.requiredTrophies) }), W - 40, 142, { size: 21, align: 'right', outline: 0.12, maxWidth: 340, minSize: 13 });
  drawText(ctx, words.t('pic.membersOf', { n: club.members.length, max: CLUB_SIZE }), W - 40, 170, { size: 19, color: THEME.muted, align: 'right', outline: 0, shadow: false, maxWidth: 340, minSize: 12 });

  membersPanel(ctx, art, club, 36, 196, W - 72, H - 34 - 14 - 196, 3, words);
  creditLine(ctx, W, H, words.t('pic.footer.club', { tag: club.tag }), words);
  return canvas;
}

export function renderClubPortrait(input: ClubImageInput, quality: Quality, words: Words): Canvas {
  const { width: W, height: H } = CLUB_IMAGE_OPTIONS[200].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const club = input.club;
  background(ctx, W, H, { top: '#2a3fb0', bottom: '#5a1d7d' });
  clubBadge(ctx, art, club.badgeId, club.name, 36, 32, 130);
  drawName(ctx, club.name, 190, 92, { size: 50, maxWidth: W - 190 - 36, minSize: 26 });
  let cx = 190;
  cx += drawText(ctx, club.tag, cx, 134, { size: 24, color: THEME.muted, outline: 0.1 }) + 16;
  typeChip(ctx, cx, 132, club, words);

  panel(ctx, 36, 186, W - 72, 226);
  drawParagraph(ctx, club.description?.trim() || words.t('pic.noDescription'), 60, 222, { size: 20, width: W - 120, maxLines: 3, color: THEME.text });
  const sy = 318;
  const sw = (W - 120) / 3;
  statBlock(ctx, 60, sy, sw, words.t('pic.totalTrophies'), fmt(club.trophies), { icon: 'trophy', color: THEME.trophy, size: 34 });
  statBlock(ctx, 60 + sw, sy, sw, words.t('club.required'), fmt(club.requiredTrophies), { icon: 'trophy', size: 34 });
  statBlock(ctx, 60 + 2 * sw, sy, sw, words.t('club.members'), `${club.members.length}/${CLUB_SIZE}`, { icon: 'people', size: 34 });

  membersPanel(ctx, art, club, 36, 432, W - 72, H - 34 - 16 - 432, 1, words);
  creditLine(ctx, W, H, words.t('pic.footer.club', { tag: club.tag }), words);
  return canvas;
}
