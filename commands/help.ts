/**
 * /help [command]: what each command does and its options, read from the definitions themselves
 * so it can never drift from what Discord shows.
 */
import { z } from 'zod';
import type { APIApplicationCommandOption, RESTPostAPIChatInputApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { UserError } from '../src/bot/errors.ts';
import type { Format } from '../src/bot/format.ts';
import { described } from '../src/bot/localize.ts';
import { matchChoices } from '../src/bot/lookup.ts';
import { Colour, type ReplyView } from '../src/bot/view.ts';

const Args = z.object({ command: z.string().optional() });

/** A definition's description as Discord shows it to the reader. */
function describedIn(o: { description: string; description_localizations?: Record<string, string | null> | null }, fmt: Format): string {
  return o.description_localizations?.[fmt.lang] ?? o.description;
}

/** `/settings apikey set key` lines for each leaf of a command. */
function usages(def: RESTPostAPIChatInputApplicationCommandsJSONBody, fmt: Format): string[] {
  const walk = (prefix: string, opts: APIApplicationCommandOption[] | undefined, description: string): string[] => {
    const subs = (opts ?? []).filter(
      (o) => o.type === ApplicationCommandOptionType.Subcommand || o.type === ApplicationCommandOptionType.SubcommandGroup,
    );
    if (subs.length) return subs.flatMap((s) => walk(`${prefix} ${s.name}`, 'options' in s ? s.options : undefined, describedIn(s, fmt)));
    const args = (opts ?? []).map((o) => ('required' in o && o.required ? `${o.name}:` : `[${o.name}:]`)).join(' ');
    const details = (opts ?? []).map((o) => `  · \`${o.name}\` ${describedIn(o, fmt)}`).join('\n');
    return [`**\`${prefix}${args ? ` ${args}` : ''}\`** — ${description}${details ? `\n${details}` : ''}`];
  };
  return walk(`/${def.name}`, def.options, describedIn(def, fmt));
}

async function run(a: z.infer<typeof Args>, ctx: CommandContext): Promise<ReplyView> {
  const defs = ctx.bot.commands.definitions();
  const { fmt } = ctx;
  if (a.command) {
    const def = defs.find((d) => d.name === a.command!.replace(/^\//, '').toLowerCase());
    if (!def) throw new UserError('error.noSuchCommand', { command: a.command.slice(0, 32) }, Colour.info);
    return { embeds: [{ title: `/${def.name}`, color: Colour.info, description: usages(def, fmt).join('\n\n') }], ephemeral: true };
  }
  return {
    embeds: [
      {
        title: fmt.t('help.title'),
        color: Colour.info,
        description: [fmt.t('help.intro'), defs.map((d) => `**/${d.name}** — ${describedIn(d, fmt)}`).join('\n'), fmt.t('help.more')].join('\n\n'),
      },
    ],
    ephemeral: true,
  };
}

export default defineCommand({
  definition: {
    name: 'help',
    ...described('command.help'),
    contexts: [0, 1],
    options: [{ type: ApplicationCommandOptionType.String, name: 'command', ...described('command.help.command'), autocomplete: true, max_length: 32 }],
  },
  args: Args,
  run,
  autocomplete: async (focused, ctx) =>
    matchChoices(
      ctx.bot.commands.definitions().map((d) => ({ name: `/${d.name}`, value: d.name })),
      focused.value.replace(/^\//, ''),
    ),
});
