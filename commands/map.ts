/**
 * /map name: a map's best brawlers by win rate and by use rate, with the number of recorded
 * battles behind each figure.
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { mapChoices, mapView } from '../src/bot/history-views.ts';
import { described } from '../src/bot/localize.ts';
import type { ReplyView } from '../src/bot/view.ts';

const Args = z.object({ name: z.string(), sort: z.enum(['win', 'use']).default('win') });
type Args = z.infer<typeof Args>;

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  return mapView(ctx, a.name, a.sort);
}

export default defineCommand({
  definition: {
    name: 'map',
    ...described('command.map'),
    contexts: [0, 1],
    options: [{ type: ApplicationCommandOptionType.String, name: 'name', ...described('command.map.name'), required: true, autocomplete: true, max_length: 100 }],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'name' ? mapChoices(ctx, focused.value) : []),
});
