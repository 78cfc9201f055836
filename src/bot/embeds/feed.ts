/**
 * Posts of a club feed (pure): one embed per recorded change of a club, and the changes of one poll
 * cut into as few messages as Discord's limits allow (10 embeds, 6000 characters per message).
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { ClubChange } from '../../core/history.ts';
import type { Format } from '../format.ts';
import { embedTotal, LIMITS } from '../limits.ts';
import { truncate } from '../fit.ts';
import { clubRole, ROLE_ORDER } from './club.ts';
import { gameName } from './common.ts';
import { clubSettingChange } from './history.ts';

/** What a feed may post: member changes, role changes, settings changes, big pushes (with a threshold). */
export const FEED_EVENTS = ['join', 'leave', 'role', 'settings', 'push'] as const;
export type FeedEvent = (typeof FEED_EVENTS)[number];

const COLOUR = { join: 0x22c55e, leave: 0xef4444, promoted: 0xffc400, demoted: 0x94a3b8, settings: 0x3b82f6, push: 0xa855f7 } as const;

/** A settings value can be a whole description (up to 250 characters in the game); an embed's description holds 4096. */
const MAX_LINE = 1500;

function rank(role: unknown): number {
  const i = typeof role === 'string' ? (ROLE_ORDER as readonly string[]).indexOf(role) : -1;
  return i < 0 ? ROLE_ORDER.length : i;
}

/** The post of one change. `club` is the club's name and tag as the footer shows them. */
export function feedEmbed(c: ClubChange, club: { name: string; tag: string }, fmt: Format): APIEmbed {
  const who = c.name ? `**${gameName(c.name)}** ${c.subject}` : c.subject;
  let colour: number;
  let text: string;
  switch (c.kind) {
    case 'join':
      colour = COLOUR.join;
      text = `🟢 ${fmt.t('log.memberJoined', { who })}`;
      break;
    case 'leave': {
      colour = COLOUR.leave;
      const lines = [`🔴 ${fmt.t('log.memberLeft', { who })}`];
      if (c.inClubSince) {
        const days = Math.max(0, Math.floor((c.t - c.inClubSince.t) / 86_400));
        lines.push(fmt.t(c.inClubSince.recorded ? 'feed.inClub' : 'feed.inClubAtLeast', { n: days }));
      }
      if (c.trophies !== undefined) lines.push(fmt.t('feed.trophiesAtLeaving', { trophies: fmt.int(c.trophies) }));
      text = lines.join('\n');
      break;
    }
    case 'role': {
      const up = rank(c.new) < rank(c.old);
      colour = up ? COLOUR.promoted : COLOUR.demoted;
      const role = (v: unknown) => (typeof v === 'string' && v ? clubRole(v, fmt) : '—');
      text = `${up ? '⬆️' : '⬇️'} ${fmt.t(up ? 'feed.promoted' : 'feed.demoted', { who })}: ${role(c.old)} → ${role(c.new)}`;
      break;
    }
    case 'settings':
      colour = COLOUR.settings;
      text = `⚙️ ${clubSettingChange(c.subject, c.old, c.new, fmt)}`;
      break;
    case 'push': {
      colour = COLOUR.push;
      const from = typeof c.old === 'number' ? c.old : 0;
      const to = typeof c.new === 'number' ? c.new : 0;
      text = `🚀 ${fmt.t('feed.push', { who, gain: fmt.signed(to - from), from: fmt.int(from), to: fmt.int(to) })}`;
      break;
    }
  }
  return {
    description: truncate(text, MAX_LINE),
    color: colour,
    footer: { text: truncate(`${gameName(club.name)} ${club.tag}`, 100) },
    timestamp: new Date(c.t * 1000).toISOString(),
  };
}

/** A message of a feed: its embeds and the changes they show, in order. */
export interface FeedMessage {
  changes: ClubChange[];
  embeds: APIEmbed[];
}

/**
 * The changes of one poll (one `t`) in messages: filled in order until the next embed would pass
 * 10 embeds or 6000 characters. Deterministic: the same changes always cut the same way, which is
 * what lets a retried post carry the same nonce.
 */
export function feedMessages(changes: ClubChange[], club: { name: string; tag: string }, fmt: Format): FeedMessage[] {
  const out: FeedMessage[] = [];
  let cur: FeedMessage | null = null;
  for (const c of changes) {
    const e = feedEmbed(c, club, fmt);
    if (cur && (cur.changes[0]!.t !== c.t || cur.embeds.length >= LIMITS.embedsPerMessage || embedTotal([...cur.embeds, e]) > LIMITS.embed.total)) {
      out.push(cur);
      cur = null;
    }
    if (!cur) cur = { changes: [], embeds: [] };
    cur.changes.push(c);
    cur.embeds.push(e);
  }
  if (cur) out.push(cur);
  return out;
}
