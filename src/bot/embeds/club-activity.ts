/**
 * The club activity view of /club activity and its CSV attachment: pure functions of the core's
 * ClubActivity answer (src/core/club-activity.ts), so the bot shows what the HTTP API answers.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { stringify } from 'csv-stringify/sync';
import type { ActivityMember, ClubActivity } from '../../core/history-schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { clubRole } from './club.ts';
import { dataFooter, gameName } from './common.ts';

/** "—" is what was not recorded: never shown as a zero. */
const NOT_RECORDED = '—';

function idle(m: ActivityMember, fmt: Format): string {
  if (m.inactiveDays === null) return NOT_RECORDED;
  const d = fmt.t('activity.days', { n: m.inactiveDays });
  return m.inactiveAtLeast ? `≥ ${d}` : d;
}

function memberLine(m: ActivityMember, a: ClubActivity, fmt: Format): string {
  const gain = m.gained === null ? NOT_RECORDED : fmt.signed(m.gained);
  const month = ` / ${m.gained30d === null ? NOT_RECORDED : fmt.signed(m.gained30d)}`;
  const parts = [
    `${m.flags.length ? '⚠️ ' : ''}**${gameName(m.name)}** · ${clubRole(m.role, fmt)}`,
    `🏆 ${gain}${month}`,
    `⚔️ ${m.battles === null ? NOT_RECORDED : fmt.int(m.battles)}`,
    `💤 ${idle(m, fmt)}`,
  ];
  if (m.joined !== null) parts.push(`📥 ${fmt.date(m.joined * 1000)}`);
  return parts.join(' · ');
}

/** Says plainly how much of the period recorded history covers. */
export function coverageText(a: ClubActivity, fmt: Format): string {
  const c = a.coverage;
  if (c.recordedFrom === null || a.members.every((m) => m.gained === null)) return fmt.t('activity.coverage.none');
  const period =
    c.share >= 1
      ? fmt.t('activity.coverage.full', { n: a.days })
      : fmt.t('activity.coverage.part', { covered: fmt.duration(c.days * 86_400), n: a.days, since: fmt.date(c.recordedFrom * 1000) });
  return `${period} ${fmt.t('activity.coverage.battles', { n: c.battlesRecorded, total: a.members.length })}`;
}

function rulesText(a: ClubActivity, fmt: Format): string {
  const rules: string[] = [];
  if (a.thresholds.minGain !== null) rules.push(fmt.t('activity.rule.gain', { min: fmt.int(a.thresholds.minGain), n: a.days }));
  if (a.thresholds.maxIdleDays !== null) rules.push(fmt.t('activity.rule.idle', { n: a.thresholds.maxIdleDays }));
  if (rules.length === 0) return fmt.t('activity.rules.none');
  const flagged = a.members.filter((m) => m.flags.length > 0).length;
  return `⚠️ ${fmt.t('activity.rules', { rules: fmt.list(rules), n: flagged })}`;
}

export function activityEmbed(a: ClubActivity, fmt: Format, o: { fetchedAt?: number; image?: string } = {}): APIEmbed {
  const head = [coverageText(a, fmt), rulesText(a, fmt), `-# ${fmt.t('activity.legend', { days: a.days })}`];
  const lines = a.members.map((m) => memberLine(m, a, fmt));
  return {
    title: `${gameName(a.name)} ${a.tag} · ${fmt.t('activity.title', { n: a.days })}`,
    color: Colour.brand,
    description: [...head, '', ...(lines.length ? lines : [`_${fmt.t('club.empty')}_`])].join('\n'),
    ...(o.image ? { image: { url: `attachment://${o.image}` } } : {}),
    ...dataFooter(fmt, o.fetchedAt),
  };
}

/** A spreadsheet would run a cell starting with these as a formula: such text is kept as text. */
const FORMULA = /^[=+\-@\t\r]/;
const text = (s: string) => (FORMULA.test(s) ? `'${s}` : s);
const iso = (unixS: number | null) => (unixS === null ? '' : new Date(unixS * 1000).toISOString().replace('.000Z', 'Z'));

/**
 * The whole table as CSV (RFC 4180 quoting by csv-stringify: commas, quotes and line breaks in
 * names are quoted; emoji pass as UTF-8, with a byte order mark so spreadsheets read them so).
 * Empty cells are what was not recorded.
 */
export function activityCsv(a: ClubActivity): Buffer {
  const header = ['tag', 'name', 'role', 'trophies', `gained_${a.days}d`, 'gained_30d', `battles_${a.days}d`, `wins_${a.days}d`, 'last_active', 'inactive_days', 'inactive_at_least', 'joined', 'flags'];
  const rows = a.members.map((m) => [
    m.tag,
    text(m.name),
    m.role,
    m.trophies,
    m.gained,
    m.gained30d,
    m.battles,
    m.wins,
    iso(m.lastActive),
    m.inactiveDays,
    m.inactiveDays === null ? null : m.inactiveAtLeast,
    iso(m.joined),
    m.flags.join(' '),
  ]);
  return Buffer.from(`\uFEFF${stringify([header, ...rows], { record_delimiter: '\r\n', cast: { boolean: (b) => (b ? 'true' : 'false') } })}`, 'utf8');
}

export const activityFileName = (a: Pick<ClubActivity, 'tag' | 'to'>) => `activity-${a.tag.replace('#', '')}-${new Date(a.to * 1000).toISOString().slice(0, 10)}.csv`;
