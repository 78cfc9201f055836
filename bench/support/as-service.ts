/**
 * Runs a benchmark script under what `npm start` gives the service: its environment (glibc's and
 * mimalloc's settings) and node's flags (V8's heap growth), read from package.json's start script by
 * startCommand, so a benchmark of one of the service's parts (the render pool) sees the same
 * collections and allocator as the service does.
 *
 *   node --import tsx bench/support/as-service.ts bench/render.ts [its arguments…]
 *
 * STARR_BENCH_NODE_FLAGS, when set, replaces the start script's node flags (space-separated; empty
 * for none), to compare a flag with and without.
 */
import { spawn } from 'node:child_process';
import { startCommand } from './service.ts';

const [script, ...rest] = process.argv.slice(2);
if (!script) {
  console.error('usage: node --import tsx bench/support/as-service.ts <benchmark script> [its arguments…]');
  process.exit(2);
}
const start = startCommand();
const firstNonFlag = start.args.findIndex((a) => !a.startsWith('-'));
const startFlags = firstNonFlag === -1 ? start.args : start.args.slice(0, firstNonFlag);
const override = process.env.STARR_BENCH_NODE_FLAGS;
const nodeFlags = override === undefined ? startFlags : override.split(/\s+/).filter(Boolean);
console.log(`as npm start runs the service: ${[...Object.entries(start.env).map(([k, v]) => `${k}=${v}`), 'node', ...nodeFlags].join(' ')}\n`);
const child = spawn(process.execPath, [...nodeFlags, '--import', 'tsx', script, ...rest], { env: { ...process.env, ...start.env }, stdio: 'inherit' });
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
