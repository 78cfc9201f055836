/**
 * /about: what the bot is, where its data comes from and how fresh it is, credits, and the
 * not-affiliated notice.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { usesSimulator } from '../src/config.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { described } from '../src/bot/localize.ts';
import { Colour, type ReplyView } from '../src/bot/view.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function run(_a: unknown, ctx: CommandContext): Promise<ReplyView> {
  const c = ctx.core.config;
  const { fmt } = ctx;
  return {
    embeds: [
      {
        title: `Starr Stats ${VERSION}`,
        color: Colour.brand,
        description: fmt.t('about.description'),
        fields: [
          { name: `📡 ${fmt.t('about.data')}`, value: fmt.t(usesSimulator(c) ? 'about.data.simulated' : 'about.data.official') },
          {
            name: `⏱️ ${fmt.t('about.freshness')}`,
            value: fmt.t('about.freshness.body', { cache: fmt.duration(c.CACHE_TTL_SECONDS), poll: fmt.duration(c.POLL_PLAYER_MINUTES * 60) }),
          },
          { name: `🙏 ${fmt.t('about.credits')}`, value: fmt.t('about.credits.body') },
          // Supercell's Fan Content Policy asks for this notice; it stays in English, word for word.
          {
            name: `⚖️ ${fmt.t('about.notice')}`,
            value:
              'This content is not affiliated with, endorsed, sponsored, or specifically approved by Supercell and Supercell is not responsible for it. ' +
              "For more information see Supercell's Fan Content Policy: https://www.supercell.com/fan-content-policy",
          },
        ],
        footer: { text: fmt.t('about.footer') },
      },
    ],
    ephemeral: true,
  };
}

export default defineCommand({
  definition: { name: 'about', ...described('command.about'), contexts: [0, 1] },
  args: z.object({}),
  run,
});
