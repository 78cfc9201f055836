/**
 * /events: the events running now with the time left (Discord timestamps), and the predicted
 * next ones when the history service has recorded enough rotations.
 */
import { z } from 'zod';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { staleNote } from '../src/bot/errors.ts';
import { described } from '../src/bot/localize.ts';
import { eventsEmbeds } from '../src/bot/embeds/events.ts';
import { upcomingEvents } from '../src/bot/history-views.ts';
import type { ReplyView } from '../src/bot/view.ts';

async function run(_a: unknown, ctx: CommandContext): Promise<ReplyView> {
  const [rotation, upcoming] = await Promise.all([ctx.core.stats.eventRotation(), upcomingEvents(ctx)]);
  const note = staleNote(rotation, ctx.fmt);
  return {
    embeds: eventsEmbeds(rotation.data, ctx.fmt, ctx.bot.now(), upcoming, rotation.fetchedAt),
    rows: [[{ type: 'button', label: ctx.fmt.t('button.refresh'), emoji: '🔄', action: { command: 'events', args: {} } }]],
    ...(note ? { content: note } : {}),
  };
}

export default defineCommand({
  definition: { name: 'events', ...described('command.events'), contexts: [0, 1] },
  args: z.object({}),
  cooldownSeconds: 3,
  run,
});
