/**
 * The event rotation: what runs now with the time left (Discord timestamps, shown in each
 * reader's time zone and language), and what is predicted next when history can tell.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { parseApiTime, type EventRotation } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { Colour } from '../view.ts';
import { CREDIT } from './common.ts';
import { modeName } from './names.ts';

export interface UpcomingEvent {
  mode?: string;
  map?: string | null;
  /** epoch ms of the predicted start */
  startsAt: number;
}

export function eventLine(mode: string | undefined, map: string | null | undefined, tail: string): string {
  return `**${modeName(mode)}**${map ? ` — ${map}` : ''} · ${tail}`;
}

export function eventsEmbeds(rotation: EventRotation, fmt: Format, nowMs: number, upcoming?: UpcomingEvent[], fetchedAt?: number): APIEmbed[] {
  const active = rotation
    .map((e) => ({ e, start: parseApiTime(e.startTime), end: parseApiTime(e.endTime) }))
    .filter((x) => Number.isFinite(x.end) && x.end > nowMs)
    .sort((a, b) => a.end - b.end || a.e.slotId - b.e.slotId);
  const embeds: APIEmbed[] = [
    {
      title: '🎮 Active events',
      color: Colour.brand,
      description: active.length
        ? active
            .map(({ e, end }) => {
              const mods = e.event.modifiers?.filter((m) => m !== 'unknown');
              return eventLine(e.event.mode, e.event.map, `ends ${fmt.relative(end)}${mods?.length ? ` · ${mods.join(', ')}` : ''}`);
            })
            .join('\n')
        : '_No event is running right now._',
      footer: { text: CREDIT },
      ...(fetchedAt ? { timestamp: new Date(fetchedAt).toISOString() } : {}),
    },
  ];
  if (upcoming?.length) {
    embeds.push({
      title: '🔮 Predicted next',
      color: Colour.info,
      description: upcoming
        .filter((u) => u.startsAt > nowMs)
        .sort((a, b) => a.startsAt - b.startsAt)
        .slice(0, 15)
        .map((u) => eventLine(u.mode, u.map, `starts ${fmt.relative(u.startsAt)}`))
        .join('\n') || '_Nothing predicted._',
      footer: { text: 'Predictions come from the rotation history this bot recorded.' },
    });
  }
  return embeds;
}
