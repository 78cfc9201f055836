/**
 * Club image option 3: the club's activity table (the core's ClubActivity, the same answer as
 * GET /clubs/{tag}/activity and /club activity): per member the trophies gained over the period,
 * battles recorded and days since play, most inactive first, flagged members marked, and how much
 * of the period recorded history covers. What is not recorded is a dash, never a zero.
 */
import type { Canvas } from '@napi-rs/canvas';
import type { ActivityMember, ClubActivity } from '../core/history-schemas.ts';
import { clubBadge, decodeArt } from './art.ts';
import { CLUB_IMAGE_OPTIONS, CLUB_SIZE } from './catalogue.ts';
import { roleOf } from './club-card.ts';
import { background, creditLine, drawName, drawText, emptyState, fmt, fmtSigned, makeCanvas, panel, roundRect, THEME, type Ctx, type Quality } from './draw.ts';
import type { ClubImageInput } from './types.ts';
import type { Words } from './words.ts';

const DASH = '—';
const GAIN_UP = '#58e07a';
const GAIN_DOWN = '#ff6b6b';
const FLAG = 'rgba(255, 90, 90, 0.16)';

function coverage(a: ClubActivity, words: Words): string {
  const c = a.coverage;
  if (c.recordedFrom === null || a.members.every((m) => m.gained === null)) return words.t('activity.coverage.none');
  const period =
    c.share >= 1
      ? words.t('activity.coverage.full', { n: a.days })
      : words.t('activity.coverage.part', { covered: words.t('activity.days', { n: Math.floor(c.days) }), n: a.days, since: words.date(c.recordedFrom * 1000, 'dayMonth') });
  return `${period} ${words.t('activity.coverage.battles', { n: c.battlesRecorded, total: a.members.length })}`;
}

function idle(m: ActivityMember, words: Words): string {
  if (m.inactiveDays === null) return DASH;
  const d = words.t('activity.days', { n: m.inactiveDays });
  return m.inactiveAtLeast ? `≥ ${d}` : d;
}

function row(ctx: Ctx, m: ActivityMember, pos: number, x: number, y: number, w: number, h: number, words: Words): void {
  if (m.flags.length) {
    roundRect(ctx, x - 4, y, w + 8, h, 8);
    ctx.fillStyle = FLAG;
    ctx.fill();
  }
  const mid = y + h / 2 + 6;
  const cols = { gain: x + w - 196, battles: x + w - 100, idle: x + w };
  drawText(ctx, String(pos), x + 14, mid, { size: 15, color: THEME.muted, outline: 0, shadow: false, align: 'center' });
  const role = roleOf(m.role, words);
  drawName(ctx, m.name, x + 34, mid - 6, { size: 17, maxWidth: cols.gain - x - 34 - 64, minSize: 11, outline: 0.1 });
  drawText(ctx, role.label, x + 34, mid + 9, { size: 11.5, color: role.color, outline: 0, shadow: false, maxWidth: cols.gain - x - 34 - 64, minSize: 8 });
  const gain = m.gained === null ? DASH : fmtSigned(m.gained);
  const colour = m.gained === null ? THEME.muted : m.gained > 0 ? GAIN_UP : m.gained < 0 ? GAIN_DOWN : THEME.text;
  drawText(ctx, gain, cols.gain, mid, { size: 17, color: colour, align: 'right', outline: 0.1 });
  drawText(ctx, m.battles === null ? DASH : fmt(m.battles), cols.battles, mid, { size: 17, color: m.battles === null ? THEME.muted : THEME.text, align: 'right', outline: 0.1 });
  const idleColour = m.flags.includes('inactive') ? GAIN_DOWN : m.inactiveDays === null ? THEME.muted : THEME.text;
  drawText(ctx, idle(m, words), cols.idle, mid, { size: 17, color: idleColour, align: 'right', outline: 0.1, maxWidth: 90, minSize: 11 });
}

function heads(ctx: Ctx, x: number, y: number, w: number, words: Words): void {
  const style = { size: 12.5, color: THEME.muted, outline: 0, shadow: false, align: 'right' as const, maxWidth: 92, minSize: 8 };
  drawText(ctx, words.upper('pic.activity.gained'), x + w - 196, y, style);
  drawText(ctx, words.upper('pic.activity.battles'), x + w - 100, y, style);
  drawText(ctx, words.upper('pic.activity.idle'), x + w, y, style);
}

export function renderClubActivity(input: ClubImageInput, quality: Quality, words: Words): Canvas {
  const { width: W, height: H } = CLUB_IMAGE_OPTIONS[3].size;
  const { canvas, ctx } = makeCanvas(W, H, quality);
  const art = decodeArt(input.art);
  const club = input.club;
  const a = input.activity ?? null;
  background(ctx, W, H, { top: '#1f5a7a', bottom: '#3a1d6d' });
  clubBadge(ctx, art, club.badgeId, club.name, 36, 22, 84);
  drawName(ctx, club.name, 136, 62, { size: 38, maxWidth: 620, minSize: 22 });
  drawText(ctx, `${club.tag} · ${words.t('activity.title', { n: a?.days ?? 7 })}`, 136, 96, { size: 19, color: THEME.muted, outline: 0.1, maxWidth: 620, minSize: 12 });
  drawText(ctx, words.t('pic.membersOf', { n: club.members.length, max: CLUB_SIZE }), W - 40, 62, { size: 19, color: THEME.muted, align: 'right', outline: 0, shadow: false, maxWidth: 360, minSize: 12 });

  const top = 126;
  const bottom = H - 34 - 12;
  panel(ctx, 36, top, W - 72, bottom - top);
  if (!a || a.members.length === 0) {
    emptyState(ctx, 36, top, W - 72, bottom - top, words.t('activity.name'), a ? words.t('club.empty') : words.t('activity.coverage.none'));
    creditLine(ctx, W, H, words.t('pic.footer.club', { tag: club.tag }), words);
    return canvas;
  }
  drawText(ctx, coverage(a, words), 58, top + 30, { size: 15, color: THEME.text, outline: 0, shadow: false, maxWidth: W - 116, minSize: 10 });
  const cols = 2;
  const perCol = Math.max(10, Math.ceil(a.members.length / cols));
  const listTop = top + 62;
  const rowH = Math.min(44, (bottom - 12 - listTop) / perCol);
  const colW = (W - 72 - 24 - 28) / cols;
  for (let c = 0; c < cols; c++) heads(ctx, 48 + c * (colW + 28), listTop - 6, colW - 12, words);
  a.members.forEach((m, i) => {
    const c = Math.floor(i / perCol);
    const r = i % perCol;
    const x = 48 + c * (colW + 28);
    const y = listTop + r * rowH;
    if (r % 2 === 0 && m.flags.length === 0) {
      roundRect(ctx, x - 4, y, colW - 4, rowH, 8);
      ctx.fillStyle = 'rgba(255, 255, 255, 0.04)';
      ctx.fill();
    }
    row(ctx, m, i + 1, x, y, colW - 12, rowH, words);
  });
  creditLine(ctx, W, H, words.t('pic.footer.club', { tag: club.tag }), words);
  return canvas;
}
