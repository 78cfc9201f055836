/**
 * The channel leaderboard message: a ranked list of a club's members or of a server's linked
 * members, with a refresh button. Pure: data in, view out.
 */
import type { Format } from '../format.ts';
import { Colour, type ReplyView } from '../view.ts';
import { gameName } from './common.ts';

export interface BoardRow {
  name: string;
  tag: string;
  trophies: number;
  /** Discord member, for the server's linked-members board */
  userId?: string;
}

/** Text of a board: a name from the game as it is, or words in the board's language. */
export type BoardText = string | ((fmt: Format) => string);

export interface BoardData {
  title: BoardText;
  /** e.g. the club's tag and member count */
  subtitle: BoardText;
  rows: BoardRow[];
  /** rows that could not be loaded (a linked tag that no longer exists) */
  skipped: number;
}

export const BOARD_ROWS = 30;

export function boardView(
  data: BoardData,
  board: { id: string; intervalMinutes: number },
  fmt: Format,
  nowMs: number,
  staleLine?: string,
): ReplyView {
  const rows = [...data.rows].sort((a, b) => b.trophies - a.trophies).slice(0, BOARD_ROWS);
  const width = String(rows.length).length;
  const lines = rows.map((r, i) => {
    const who = r.userId ? ` · <@${r.userId}>` : '';
    return `\`${String(i + 1).padStart(width, ' ')}.\` **${gameName(r.name)}** — 🏆 ${fmt.int(r.trophies)}${who}`;
  });
  const total = data.rows.reduce((s, r) => s + r.trophies, 0);
  const text = (t: BoardText) => (typeof t === 'string' ? t : t(fmt));
  const description = [
    text(data.subtitle),
    staleLine,
    '',
    lines.length ? lines.join('\n') : `_${fmt.t('board.empty')}_`,
    data.rows.length > rows.length ? fmt.t('board.more', { n: data.rows.length - rows.length }) : undefined,
    data.skipped ? `_${fmt.t('board.skipped', { n: data.skipped })}_` : undefined,
  ]
    .filter((l): l is string => l !== undefined)
    .join('\n');
  return {
    embeds: [
      {
        title: `🏆 ${text(data.title)}`,
        description,
        color: Colour.brand,
        fields: [
          { name: fmt.t('board.total'), value: fmt.int(total), inline: true },
          { name: fmt.t('board.players'), value: fmt.int(data.rows.length), inline: true },
          { name: fmt.t('board.next'), value: fmt.relative(nowMs + board.intervalMinutes * 60_000), inline: true },
        ],
        footer: { text: fmt.t('board.footer', { every: fmt.duration(board.intervalMinutes * 60) }) },
        timestamp: new Date(nowMs).toISOString(),
      },
    ],
    rows: [
      [
        {
          type: 'button',
          label: fmt.t('button.refresh'),
          emoji: '🔄',
          style: 'secondary',
          action: { command: 'leaderboard', args: { sub: 'refresh', board: board.id } },
        },
      ],
    ],
  };
}
