/**
 * /brawler name [view]: a brawler's gadgets, star powers, hypercharges and gears with its top
 * players, or its best build from recorded battles (premium).
 */
import { z } from 'zod';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError, staleNote } from '../src/bot/errors.ts';
import { choice, described } from '../src/bot/localize.ts';
import { brawlerEmbed } from '../src/bot/embeds/brawler.ts';
import { bestBuildEmbed } from '../src/bot/history-views.ts';
import { brawlerChoices, findBrawler, requirePremium } from '../src/bot/lookup.ts';
import type { ReplyView, ViewComponent } from '../src/bot/view.ts';

const Args = z.object({ name: z.string(), view: z.enum(['overview', 'build']).default('overview') });
type Args = z.infer<typeof Args>;

async function run(a: Args, ctx: CommandContext): Promise<ReplyView> {
  const list = await ctx.core.stats.brawlers();
  const b = findBrawler(list.data.items, a.name);
  if (!b) throw new UserError('error.unknownBrawler', { name: a.name.slice(0, 40) });
  const switcher: ViewComponent[] = [
    {
      type: 'button',
      label: ctx.fmt.t('view.brawler.overview'),
      emoji: '📖',
      disabled: a.view === 'overview',
      action: { command: 'brawler', args: { name: String(b.id), view: 'overview' } },
    },
    {
      type: 'button',
      label: ctx.fmt.t('view.brawler.build'),
      emoji: '🛠️',
      disabled: a.view === 'build',
      action: { command: 'brawler', args: { name: String(b.id), view: 'build' } },
    },
  ];
  if (a.view === 'build') {
    requirePremium(ctx, 'view.brawler.build');
    return { embeds: [await bestBuildEmbed(ctx, b)], rows: [switcher] };
  }
  const top = await ctx.core.stats.brawlerRankings('global', b.id).catch(() => undefined);
  const note = staleNote(list, ctx.fmt);
  return {
    embeds: [brawlerEmbed(b, ctx.fmt, top?.data.items, list.fetchedAt)],
    rows: [switcher],
    ...(note ? { content: note } : {}),
  };
}

export default defineCommand({
  definition: {
    name: 'brawler',
    ...described('command.brawler'),
    contexts: [0, 1],
    options: [
      { type: ApplicationCommandOptionType.String, name: 'name', ...described('command.brawler.name'), required: true, autocomplete: true, max_length: 60 },
      {
        type: ApplicationCommandOptionType.String,
        name: 'view',
        ...described('command.brawler.view'),
        choices: [choice('view.brawler.overview', 'overview'), choice('view.brawler.build', 'build')],
      },
    ],
  },
  args: Args,
  cooldownSeconds: 3,
  run,
  autocomplete: async (focused, ctx) => (focused.name === 'name' ? brawlerChoices(ctx, focused.value) : []),
});
