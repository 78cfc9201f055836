/**
 * /help [command]: what each command does and its options, read from the definitions themselves
 * so it can never drift from what Discord shows.
 */
import { z } from 'zod';
import type { APIApplicationCommandOption, RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError } from '../src/bot/errors.ts';
import { matchChoices } from '../src/bot/lookup.ts';
import { Colour, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({ command: z.string().optional() });

/** `/settings apikey set key` lines for each leaf of a command. */
function usages(def: RESTPostAPIChatInputApplicationCommandsJSONBody): string[] {
  const walk = (prefix: string, opts: APIApplicationCommandOption[] | undefined, description: string): string[] => {
    const subs = (opts ?? []).filter(
      (o) => o.type === ApplicationCommandOptionType.Subcommand || o.type === ApplicationCommandOptionType.SubcommandGroup,
    );
    if (subs.length) return subs.flatMap((s) => walk(`${prefix} ${s.name}`, 'options' in s ? s.options : undefined, s.description));
    const args = (opts ?? []).map((o) => ('required' in o && o.required ? `${o.name}:` : `[${o.name}:]`)).join(' ');
    const details = (opts ?? []).map((o) => `  · \`${o.name}\` ${o.description}`).join('\n');
    return [`**\`${prefix}${args ? ` ${args}` : ''}\`** — ${description}${details ? `\n${details}` : ''}`];
  };
  return walk(`/${def.name}`, def.options, def.description);
}

async function run(a: z.infer<typeof Args>, ctx: CommandContext): Promise<ReplyView> {
  const defs = ctx.bot.commands.definitions();
  if (a.command) {
    const def = defs.find((d) => d.name === a.command!.replace(/^\//, '').toLowerCase());
    if (!def) throw new UserError('No such command', `There is no /${a.command.slice(0, 32)}. \`/help\` lists them all.`, Colour.info);
    return { embeds: [{ title: `/${def.name}`, color: Colour.info, description: usages(def).join('\n\n') }], ephemeral: true };
  }
  return {
    embeds: [
      {
        title: 'Starr Stats commands',
        color: Colour.info,
        description:
          'Brawl Stars statistics in Discord. Link your account once with `/link` and most commands work without a tag.\n\n' +
          defs.map((d) => `**/${d.name}** — ${d.description}`).join('\n') +
          '\n\n`/help command:<name>` shows the options of one command.',
      },
    ],
    ephemeral: true,
  };
}

export default defineCommand({
  definition: {
    name: 'help',
    description: 'What each command does',
    contexts: [0, 1],
    options: [{ type: ApplicationCommandOptionType.String, name: 'command', description: 'One command in detail', autocomplete: true, max_length: 32 }],
  },
  args: Args,
  run,
  autocomplete: async (focused, ctx) =>
    matchChoices(
      ctx.bot.commands.definitions().map((d) => ({ name: `/${d.name}`, value: d.name })),
      focused.value.replace(/^\//, ''),
    ),
});
