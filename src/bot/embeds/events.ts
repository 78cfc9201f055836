/**
 * The event rotation: what runs now with the time left (Discord timestamps, shown in each
 * reader's time zone and language), and what is predicted next when history can tell.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { parseApiTime, type EventRotation } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { dataFooter } from './common.ts';
import { modeName } from './names.ts';

export interface UpcomingEvent {
  mode?: string;
  map?: string | null;
  /** epoch ms of the predicted start */
  startsAt: number;
}

export function eventLine(mode: string | undefined, map: string | null | undefined, tail: string, fmt: Format): string {
  return `**${modeName(mode, fmt)}**${map ? ` — ${map}` : ''} · ${tail}`;
}

export function eventsEmbeds(rotation: EventRotation, fmt: Format, nowMs: number, upcoming?: UpcomingEvent[], fetchedAt?: number): APIEmbed[] {
  const active = rotation
    .map((e) => ({ e, start: parseApiTime(e.startTime), end: parseApiTime(e.endTime) }))
    .filter((x) => Number.isFinite(x.end) && x.end > nowMs)
    .sort((a, b) => a.end - b.end || a.e.slotId - b.e.slotId);
  const embeds: APIEmbed[] = [
    {
      title: `🎮 ${fmt.t('events.active')}`,
      color: Colour.brand,
      description: active.length
        ? active
            .map(({ e, end }) => {
              const mods = e.event.modifiers?.filter((m) => m !== 'unknown');
              return eventLine(e.event.mode, e.event.map, `${fmt.t('events.ends', { when: fmt.relative(end) })}${mods?.length ? ` · ${mods.join(', ')}` : ''}`, fmt);
            })
            .join('\n')
        : `_${fmt.t('events.none')}_`,
      ...dataFooter(fmt, fetchedAt),
    },
  ];
  if (upcoming?.length) {
    embeds.push({
      title: `🔮 ${fmt.t('events.predicted')}`,
      color: Colour.info,
      description: upcoming
        .filter((u) => u.startsAt > nowMs)
        .sort((a, b) => a.startsAt - b.startsAt)
        .slice(0, 15)
        .map((u) => eventLine(u.mode, u.map, fmt.t('events.starts', { when: fmt.relative(u.startsAt) }), fmt))
        .join('\n') || `_${fmt.t('events.nothingPredicted')}_`,
      footer: { text: fmt.t('events.predictionsFooter') },
    });
  }
  return embeds;
}
