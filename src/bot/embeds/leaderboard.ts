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

export interface BoardData {
  title: string;
  /** e.g. club tag and requirement, or "12 linked members" */
  subtitle: string;
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
  const description = [
    data.subtitle,
    staleLine,
    '',
    lines.length ? lines.join('\n') : '_Nobody to show yet._',
    data.rows.length > rows.length ? `…and ${fmt.int(data.rows.length - rows.length)} more` : undefined,
    data.skipped ? `_${fmt.count(data.skipped, 'linked account')} could not be loaded._` : undefined,
  ]
    .filter((l): l is string => l !== undefined)
    .join('\n');
  return {
    embeds: [
      {
        title: `🏆 ${data.title}`,
        description,
        color: Colour.brand,
        fields: [
          { name: 'Total trophies', value: fmt.int(total), inline: true },
          { name: 'Players', value: fmt.int(data.rows.length), inline: true },
          { name: 'Next update', value: fmt.relative(nowMs + board.intervalMinutes * 60_000), inline: true },
        ],
        footer: { text: `Refreshes every ${fmt.duration(board.intervalMinutes * 60)} · updated` },
        timestamp: new Date(nowMs).toISOString(),
      },
    ],
    rows: [
      [
        {
          type: 'button',
          label: 'Refresh',
          emoji: '🔄',
          style: 'secondary',
          action: { command: 'leaderboard', args: { sub: 'refresh', board: board.id } },
        },
      ],
    ],
  };
}
