import type { CliIo } from '../cli.ts';
import { loadCliConfig, untilSignal } from './args.ts';

export const summary = 'Start the service: HTTP API, poller, and the Discord bot when DISCORD_TOKEN is set (npm start)';
export const usage = 'starr serve';

export async function run(args: string[], io: CliIo): Promise<number> {
  if (args.length > 0) {
    io.err(`starr serve takes no arguments (settings are environment variables; see .env.example). Got: ${args.join(' ')}`);
    return 2;
  }
  const cfg = loadCliConfig(io);
  if (typeof cfg === 'number') return cfg;
  const { startApp } = await import('../app.ts');
  const app = await startApp(cfg, { listen: true });
  io.out(`Starr Stats is listening on ${app.url} (API docs: ${app.url}/docs)`);
  const signal = await untilSignal();
  app.logger.info({ signal }, 'shutting down');
  await app.close();
  return 0;
}
