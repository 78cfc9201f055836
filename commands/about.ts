/**
 * /about: what the bot is, where its data comes from and how fresh it is, credits, and the
 * not-affiliated notice.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { usesSimulator } from '../src/config.ts';
import { defineCommand, type CommandContext } from '../src/bot/command.ts';
import { Colour, type ReplyView } from '../src/bot/view.ts';

const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function run(_a: unknown, ctx: CommandContext): Promise<ReplyView> {
  const c = ctx.core.config;
  const { fmt } = ctx;
  const source = usesSimulator(c)
    ? "**a simulated game world** (this bot runs without a token for the game's API: players and clubs are invented)"
    : "the game's official API";
  return {
    embeds: [
      {
        title: `Starr Stats ${VERSION}`,
        color: Colour.brand,
        description:
          'Brawl Stars statistics for Discord: profiles, clubs, rankings, brawlers, events, maps, charts and channel leaderboards.',
        fields: [
          { name: '📡 Data', value: `From ${source}.` },
          {
            name: '⏱️ Freshness',
            value:
              `Answers are cached for ${fmt.duration(c.CACHE_TTL_SECONDS)}; a new battle can take up to 30 minutes to reach the game's API. ` +
              `Linked players and clubs on leaderboards are recorded every ${fmt.duration(c.POLL_PLAYER_MINUTES * 60)} for history and charts. ` +
              "When the game's API is down, you get the last saved copy with its age.",
          },
          { name: '🙏 Credits', value: 'Data: Supercell\'s Brawl Stars API. Fonts: Lilita One and Noto. Built on discord.js.' },
          {
            name: '⚖️ Notice',
            value:
              'This content is not affiliated with, endorsed, sponsored, or specifically approved by Supercell and Supercell is not responsible for it. ' +
              "For more information see Supercell's Fan Content Policy: https://www.supercell.com/fan-content-policy",
          },
        ],
        footer: { text: 'Please credit Starr Stats when you share its statistics.' },
      },
    ],
    ephemeral: true,
  };
}

export default defineCommand({
  definition: { name: 'about', description: 'Where the data comes from, credits and notices', contexts: [0, 1] },
  args: z.object({}),
  run,
});
