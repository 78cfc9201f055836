import type { CliIo } from '../cli.ts';
import { intOption, parseArgs, readArgs, untilSignal, UsageError } from './args.ts';

export const summary = "Run Discord's REST proxy (@discordjs/proxy) that every bot process shares as DISCORD_API_URL";
export const usage =
  'starr discord-proxy [--port P] [--host H] [--upstream URL]\n\n' +
  '  --port      port to listen on (default 8081; 0: any free port)\n' +
  '  --host      address to listen on (default 127.0.0.1)\n' +
  "  --upstream  Discord's REST base without the version (default https://discord.com/api)\n\n" +
  'Point each bot process at it: DISCORD_API_URL=http://<host>:<port>/api. The processes send their own\n' +
  'bot token; the proxy keeps none. Run one per bot application.';

export async function run(args: string[], io: CliIo): Promise<number> {
  const opts = readArgs(io, usage, () => {
    const p = parseArgs(args, { values: ['port', 'host', 'upstream'] });
    if (p.positional.length > 0) throw new UsageError(`unexpected argument ${p.positional[0]}`);
    const host = p.flags.host;
    if (host === true) throw new UsageError('--host needs a value');
    const upstream = p.flags.upstream;
    if (upstream === true || (upstream !== undefined && !/^https?:\/\/[^/]/.test(upstream))) {
      throw new UsageError('--upstream expects a URL starting with http:// or https://, such as https://discord.com/api');
    }
    return { port: intOption(p, 'port', 8081, 0, 65535), host: host ?? '127.0.0.1', upstream: upstream?.replace(/\/+$/, '') };
  });
  if (typeof opts === 'number') return opts;
  const { startDiscordProxy } = await import('../bot/discord-proxy.ts');
  let proxy;
  try {
    proxy = await startDiscordProxy({ port: opts.port, host: opts.host, ...(opts.upstream ? { upstream: opts.upstream } : {}) });
  } catch (e) {
    io.err(`Could not start the Discord REST proxy on ${opts.host}:${opts.port}: ${(e as Error).message}`);
    return 1;
  }
  io.out(`Discord REST proxy to ${opts.upstream ?? 'https://discord.com/api'} at ${proxy.url}`);
  io.out(`Set DISCORD_API_URL=${proxy.url} in every bot process. Ctrl+C stops.`);
  await untilSignal();
  await proxy.close();
  return 0;
}
