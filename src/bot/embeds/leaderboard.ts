/**
 * The channel leaderboard message: a ranked list of a club's members or of a server's linked
 * members, with a refresh button. Pure: data in, view out.
 */
import type { Format } from '../format.ts';
import { Colour, type ReplyView } from '../view.ts';
import { gameName } from './common.ts';
import type { BoardMetric } from '../settings.ts';

export interface BoardRow {
  name: string;
  tag: string;
  trophies: number;
  /** Discord member, for the server's linked-members board */
  userId?: string;
  /** what the board ranks by when it is not trophies (a gain, battles, a win rate) */
  value?: number;
  /** battles behind a win rate */
  battles?: number;
}

/** A period a board counts over, epoch ms; `id` names an ISO week (2026-W23). */
export interface Period {
  start: number;
  end: number;
  id?: string;
}

/** Win rates are ranked only for members with at least this many battles in the week. */
export const WIN_RATE_MIN_BATTLES = 20;

type Metric = BoardMetric;

/**
 * Rows of a metric from members' gains and battles over the period: members with the metric not
 * recorded are left out and counted (`unrecorded`), as are win rates on fewer than
 * WIN_RATE_MIN_BATTLES battles (`tooFew`).
 */
export function metricRows(
  metric: Exclude<Metric, 'trophies'>,
  gains: { tag: string; name: string; trophies: number; gained: number | null; battles: number | null; wins: number | null }[],
  users: Map<string, string | undefined> = new Map(),
): { rows: BoardRow[]; unrecorded: number; tooFew: number } {
  const rows: BoardRow[] = [];
  let unrecorded = 0;
  let tooFew = 0;
  for (const g of gains) {
    const userId = users.get(g.tag);
    const row: BoardRow = { name: g.name, tag: g.tag, trophies: g.trophies, ...(userId ? { userId } : {}) };
    if (metric === 'weekGain' || metric === 'seasonGain') {
      if (g.gained === null) unrecorded++;
      else rows.push({ ...row, value: g.gained });
    } else if (g.battles === null || g.wins === null) unrecorded++;
    else if (metric === 'weekBattles') rows.push({ ...row, value: g.battles });
    else if (g.battles < WIN_RATE_MIN_BATTLES) tooFew++;
    else rows.push({ ...row, value: g.wins / g.battles, battles: g.battles });
  }
  return { rows, unrecorded, tooFew };
}

function ranked(data: BoardData): BoardRow[] {
  const key = (r: BoardRow) => r.value ?? r.trophies;
  return [...data.rows].sort((a, b) => key(b) - key(a) || b.trophies - a.trophies || (a.tag < b.tag ? -1 : 1));
}

/** One row's figure: trophies, a signed gain, battles, or a win rate with its battles. */
function figure(r: BoardRow, metric: Metric, fmt: Format): string {
  switch (metric) {
    case 'trophies':
      return `🏆 ${fmt.int(r.trophies)}`;
    case 'weekGain':
    case 'seasonGain':
      return `📈 ${fmt.signed(r.value ?? 0)}`;
    case 'weekBattles':
      return `⚔️ ${fmt.int(r.value ?? 0)}`;
    case 'weekWinRate':
      return `🎯 ${fmt.pct(r.value ?? 0)} · ⚔️ ${fmt.int(r.battles ?? 0)}`;
  }
}

/** The board's total: trophies, gains and battles add up; a win rate is the rate over every counted battle. */
function total(data: BoardData, fmt: Format): string {
  const metric = data.metric ?? 'trophies';
  if (metric === 'weekWinRate') {
    const battles = data.rows.reduce((s, r) => s + (r.battles ?? 0), 0);
    const wins = data.rows.reduce((s, r) => s + (r.value ?? 0) * (r.battles ?? 0), 0);
    return battles ? fmt.pct(wins / battles) : '—';
  }
  const sum = data.rows.reduce((s, r) => s + (metric === 'trophies' ? r.trophies : (r.value ?? 0)), 0);
  return metric === 'trophies' || metric === 'weekBattles' ? fmt.int(sum) : fmt.signed(sum);
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
  /** what the rows rank by (default trophies) */
  metric?: Metric;
  /** the metric and its period in words */
  period?: BoardText;
  /** members left out, in words */
  notes?: (fmt: Format) => string[];
}

export const BOARD_ROWS = 30;

export function boardView(
  data: BoardData,
  board: { id: string; intervalMinutes: number },
  fmt: Format,
  nowMs: number,
  staleLine?: string,
): ReplyView {
  const metric = data.metric ?? 'trophies';
  const rows = ranked(data).slice(0, BOARD_ROWS);
  const lines = rankLines(rows, metric, fmt);
  const text = (t: BoardText) => (typeof t === 'string' ? t : t(fmt));
  const description = [
    text(data.subtitle),
    data.period ? `**${text(data.period)}**` : undefined,
    staleLine,
    '',
    lines.length ? lines.join('\n') : `_${fmt.t('board.empty')}_`,
    data.rows.length > rows.length ? fmt.t('board.more', { n: data.rows.length - rows.length }) : undefined,
    data.skipped ? `_${fmt.t('board.skipped', { n: data.skipped })}_` : undefined,
    ...(data.notes?.(fmt).map((n) => `_${n}_`) ?? []),
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
          { name: metric === 'trophies' ? fmt.t('board.total') : fmt.t(`board.metric.${metric}`), value: total(data, fmt), inline: true },
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

function rankLines(rows: BoardRow[], metric: Metric, fmt: Format, medals = false): string[] {
  const width = String(rows.length).length;
  return rows.map((r, i) => {
    const who = r.userId ? ` · <@${r.userId}>` : '';
    const place = medals && i < 3 ? ['🥇', '🥈', '🥉'][i]! : `\`${String(i + 1).padStart(width, ' ')}.\``;
    return `${place} **${gameName(r.name)}** — ${figure(r, metric, fmt)}${who}`;
  });
}

/** Rows on a week's results post. */
export const RESULT_ROWS = 10;

/** The post a weekly board makes when its week closes: the final ranking, top three with medals. */
export function resultsView(data: BoardData, week: Period, fmt: Format): ReplyView {
  const metric = data.metric ?? 'trophies';
  const text = (t: BoardText) => (typeof t === 'string' ? t : t(fmt));
  const rows = ranked(data).slice(0, RESULT_ROWS);
  const description = [
    fmt.t('board.results.body', { metric: fmt.t(`board.metric.${metric}`), from: fmt.date(week.start), to: fmt.date(week.end - 1) }),
    '',
    rows.length ? rankLines(rows, metric, fmt, true).join('\n') : `_${fmt.t('board.empty')}_`,
    ...(data.notes?.(fmt).map((n) => `_${n}_`) ?? []),
  ].join('\n');
  return {
    embeds: [
      {
        title: `🏁 ${fmt.t('board.results.title', { week: week.id ?? '', title: text(data.title) })}`,
        description,
        color: Colour.brand,
        fields: [{ name: fmt.t(`board.metric.${metric}`), value: total(data, fmt), inline: true }],
        footer: { text: text(data.subtitle) },
        timestamp: new Date(week.end).toISOString(),
      },
    ],
  };
}
