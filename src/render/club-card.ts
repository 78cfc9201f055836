/**
 * Club images: option 2 (classic card, landscape) and 200 (the same in portrait format).
 */
import type { Canvas } from '@napi-rs/canvas';
import { nameColorToCss, type Club, type ClubMember } from '../upstream/schemas.ts';
import { clubBadge, decodeArt, playerIcon, type ArtImages } from './art.ts';
import { CLUB_IMAGE_OPTIONS } from './catalogue.ts';
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

const ROLE_LABEL: Record<string, { label: string; color: string }> = {
  president: { label: 'President', color: THEME.trophy },
  vicePresident: { label: 'Vice President', color: '#ff9a3a' },
  senior: { label: 'Senior', color: '#5fd3ff' },
  member: { label: 'Member', color: THEME.muted },
};

const TYPE_LABEL: Record<string, string> = { open: 'Open', inviteOnly: 'Invite only', closed: 'Closed' };

/** Human words for an open enum value we do not know: `someNewRole` → "Some new role". */
function words(s: string): string {
  const w = s.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  return w.charAt(0).toUpperCase() + w.slice(1);
}

export function roleOf(role: string): { label: string; color: string } {
  return ROLE_LABEL[role] ?? { label: words(role), color: THEME.muted };
}

export function clubTypeLabel(type: string): string {
  return TYPE_LABEL[type] ?? words(type);
}

/** Members as the game lists them: trophies, highest first. */
function sortedMembers(club: Club): ClubMember[] {
  return [...club.members].sort((a, b) => b.trophies - a.trophies || a.tag.localeCompare(b.tag));
}

function typeChip(ctx: Ctx, x: number, y: number, club: Club): number {
  const text = clubTypeLabel(club.type).toUpperCase();
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

function memberRow(ctx: Ctx, art: ArtImages, m: ClubMember, pos: number, x: number, y: number, w: number, h: number): void {
  const role = roleOf(m.role);
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
    drawText(ctx, role.label, tx, y + h * 0.5 + 16, { size: 13.5, color: role.color, outline: 0, shadow: false });
    if (m.role === 'president') icon(ctx, 'crown', tx + measure(ctx, role.label, 13.5) + 12, y + h * 0.5 + 11, 14);
  } else {
    // wide row: name, role in its own column before the trophies
    const roleW = 130;
    drawName(ctx, m.name, tx, y + h / 2 + 7, { size: 19, color: nameColor, maxWidth: w - (tx - x) - tw - roleW - 12, minSize: 13, outline: 0.12 });
    // a fixed column, so roles line up whatever the trophy counts are
    const rx = x + w - 140 - roleW;
    if (m.role === 'president') icon(ctx, 'crown', rx - 12, y + h / 2 + 1, 16);
    drawText(ctx, role.label, rx, y + h / 2 + 6, { size: 16, color: role.color, outline: 0, shadow: false, maxWidth: roleW - 8 });
  }
  icon(ctx, 'trophy', x + w - tw + 9, y + h / 2 - 1, 18);
  drawText(ctx, trophies, x + w - 4, y + h / 2 + 7, { size: 19, color: THEME.trophy, align: 'right', outline: 0.12 });
}

function membersPanel(ctx: Ctx, art: ArtImages, club: Club, x: number, y: number, w: number, h: number, cols: number): void {
  panel(ctx, x, y, w, h);
  const members = sortedMembers(club);
  drawText(ctx, `MEMBERS ${members.length}/30`, x + 22, y + 32, { size: 19, color: THEME.muted, outline: 0, shadow: false });
  if (members.length === 0) {
    drawText(ctx, 'This club has no members', x + w / 2, y + h / 2, { size: 26, align: 'center' });
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
    memberRow(ctx, art, m, i + 1, rx, ry, colW - 16, rowH);
  });
}

export function renderClubClassic(input: ClubImageInput, quality: Quality): Canvas {
  const { width: W, height: H } = CLUB_IMAGE_OPTIONS[2].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const club = input.club;
  background(ctx, W, H, { top: '#2a3fb0', bottom: '#5a1d7d' });
  clubBadge(ctx, art, club.badgeId, club.name, 36, 26, 112);
  drawName(ctx, club.name, 168, 72, { size: 48, maxWidth: 600, minSize: 28 });
  let cx = 168;
  cx += drawText(ctx, club.tag, cx, 108, { size: 22, color: THEME.muted, outline: 0.1 }) + 16;
  typeChip(ctx, cx, 106, club);
  drawParagraph(ctx, club.description?.trim() || 'No description.', 168, 140, { size: 17, width: 640, maxLines: 2, color: THEME.text });

  // right: the club's numbers
  drawText(ctx, 'TOTAL TROPHIES', W - 40, 52, { size: 18, color: THEME.muted, outline: 0, shadow: false, align: 'right' });
  const tw = drawText(ctx, fmt(club.trophies), W - 40, 106, { size: 52, color: THEME.trophy, align: 'right' });
  icon(ctx, 'trophy', W - 40 - tw - 30, 86, 46);
  drawText(ctx, `Required ${fmt(club.requiredTrophies)}`, W - 40, 142, { size: 21, align: 'right', outline: 0.12 });
  drawText(ctx, `${club.members.length}/30 members`, W - 40, 170, { size: 19, color: THEME.muted, align: 'right', outline: 0, shadow: false });

  membersPanel(ctx, art, club, 36, 196, W - 72, H - 34 - 14 - 196, 3);
  creditLine(ctx, W, H, `${club.tag} · club`);
  return canvas;
}

export function renderClubPortrait(input: ClubImageInput, quality: Quality): Canvas {
  const { width: W, height: H } = CLUB_IMAGE_OPTIONS[200].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const club = input.club;
  background(ctx, W, H, { top: '#2a3fb0', bottom: '#5a1d7d' });
  clubBadge(ctx, art, club.badgeId, club.name, 36, 32, 130);
  drawName(ctx, club.name, 190, 92, { size: 50, maxWidth: W - 190 - 36, minSize: 26 });
  let cx = 190;
  cx += drawText(ctx, club.tag, cx, 134, { size: 24, color: THEME.muted, outline: 0.1 }) + 16;
  typeChip(ctx, cx, 132, club);

  panel(ctx, 36, 186, W - 72, 226);
  drawParagraph(ctx, club.description?.trim() || 'No description.', 60, 222, { size: 20, width: W - 120, maxLines: 3, color: THEME.text });
  const sy = 318;
  const sw = (W - 120) / 3;
  statBlock(ctx, 60, sy, sw, 'Total trophies', fmt(club.trophies), { icon: 'trophy', color: THEME.trophy, size: 34 });
  statBlock(ctx, 60 + sw, sy, sw, 'Required', fmt(club.requiredTrophies), { icon: 'trophy', size: 34 });
  statBlock(ctx, 60 + 2 * sw, sy, sw, 'Members', `${club.members.length}/30`, { icon: 'people', size: 34 });

  membersPanel(ctx, art, club, 36, 432, W - 72, H - 34 - 16 - 432, 1);
  creditLine(ctx, W, H, `${club.tag} · club`);
  return canvas;
}
