/**
 * HTTP API throughput: autocannon against a cached GET /brawlers of the real server (rate limits,
 * validation, caching headers, metrics: the whole request path), and in the same run against a
 * bare node:http server sending the same bytes and headers. Prints both throughputs, the ratio
 * and p99 latency. Targets: at least 0.7 of the bare server, p99 under 10 ms.
 *
 *   npm run bench:http [-- --seconds 5 --rounds 3 --connections 10]
 *
 * The servers run in a child process so that autocannon (this process) does not share their
 * event loop: on a 2-core machine each side gets a core. Runs alternate (API, bare, API, ...) and
 * the medians are compared, so a burst of load from elsewhere skews both sides alike.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
// @ts-expect-error autocannon ships no types
import autocannon from 'autocannon';
import { silentLogger } from '../src/log.ts';

interface Result {
  requests: { average: number; total: number };
  latency: { p50: number; p99: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
}

async function serveBoth(): Promise<void> {
  const { startWorld } = await import('../test/support/world.ts');
  const { createHttpServer } = await import('../src/http/server.ts');
  // The free plan is what most clients use; the limit is raised so the run is not refused.
  const world = await startWorld({ env: { RATE_LIMIT_FREE: '1000000' } });
  const app = createHttpServer(world.core, { logger: silentLogger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const apiPort = (app.server.address() as AddressInfo).port;

  // What the API sends for a cached GET /brawlers, byte for byte, minus per-response headers.
  const sample = await app.inject({ method: 'GET', url: '/brawlers' });
  const body = sample.rawPayload;
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(sample.headers)) {
    if (!['date', 'connection', 'keep-alive'].includes(k) && v !== undefined) headers[k] = String(v);
  }
  const bare = createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const barePort = (bare.address() as AddressInfo).port;
  process.send!({ apiPort, barePort, bytes: body.length });
  process.on('message', async (m) => {
    // CPU time of this process, so the parent can tell server work from waiting on the client.
    if (m === 'cpu') process.send!({ cpu: process.cpuUsage() });
    if (m === 'stop') {
      bare.close();
      await app.close();
      await world.close();
      process.exit(0);
    }
  });
}

function load(url: string, seconds: number, connections: number): Promise<Result> {
  return new Promise((resolve, reject) => {
    autocannon({ url, duration: seconds, connections, pipelining: 1 }, (err: Error | null, r: Result) => (err ? reject(err) : resolve(r)));
  });
}

let child: ChildProcess;
function serverCpu(): Promise<number> {
  return new Promise((resolve) => {
    child.once('message', (m) => {
      const { cpu } = m as { cpu: NodeJS.CpuUsage };
      resolve(cpu.user + cpu.system);
    });
    child.send('cpu');
  });
}

/** One autocannon run, with the server's CPU microseconds per request. */
async function run(url: string, seconds: number, connections: number): Promise<Result & { cpuPerRequest: number }> {
  const before = await serverCpu();
  const r = await load(url, seconds, connections);
  const after = await serverCpu();
  return { ...r, cpuPerRequest: (after - before) / Math.max(1, r.requests.total) };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '5' },
      rounds: { type: 'string', default: '3' },
      connections: { type: 'string', default: '10' },
    },
  });
  const seconds = Number(values.seconds);
  const rounds = Number(values.rounds);
  const connections = Number(values.connections);
  child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--import', 'tsx'] });
  const ports = await new Promise<{ apiPort: number; barePort: number; bytes: number }>((resolve, reject) => {
    child.once('message', (m) => resolve(m as { apiPort: number; barePort: number; bytes: number }));
    child.once('exit', (code) => reject(new Error(`server process exited with ${code}`)));
  });
  const api = `http://127.0.0.1:${ports.apiPort}/brawlers`;
  const bare = `http://127.0.0.1:${ports.barePort}/brawlers`;
  console.log(
    `GET /brawlers: ${ports.bytes} bytes, ${connections} connections, ${rounds} rounds of ${seconds} s per server (after a 2 s warm-up each)`,
  );

  await run(api, 2, connections);
  await run(bare, 2, connections);
  const line = (name: string, r: Result & { cpuPerRequest: number }) =>
    `${name.padEnd(12)} ${r.requests.average.toFixed(0).padStart(8)} req/s   p50 ${String(r.latency.p50).padStart(3)} ms   p99 ${String(
      r.latency.p99,
    ).padStart(3)} ms   server CPU ${r.cpuPerRequest.toFixed(0).padStart(4)} µs/req   non-2xx ${r.non2xx}   errors ${r.errors + r.timeouts}`;
  const apiRuns: (Result & { cpuPerRequest: number })[] = [];
  const bareRuns: (Result & { cpuPerRequest: number })[] = [];
  for (let i = 0; i < rounds; i++) {
    apiRuns.push(await run(api, seconds, connections));
    console.log(line('starr API', apiRuns.at(-1)!));
    bareRuns.push(await run(bare, seconds, connections));
    console.log(line('bare node', bareRuns.at(-1)!));
  }
  child.send('stop');

  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const a = median(apiRuns.map((r) => r.requests.average));
  const b = median(bareRuns.map((r) => r.requests.average));
  const p99 = median(apiRuns.map((r) => r.latency.p99));
  const bareP99 = median(bareRuns.map((r) => r.latency.p99));
  const cpuA = median(apiRuns.map((r) => r.cpuPerRequest));
  const cpuB = median(bareRuns.map((r) => r.cpuPerRequest));
  console.log(`median: starr API ${a.toFixed(0)} req/s, bare node ${b.toFixed(0)} req/s`);
  console.log(`server CPU per request: starr API ${cpuA.toFixed(0)} µs, bare node ${cpuB.toFixed(0)} µs (ratio ${(cpuB / cpuA).toFixed(2)})`);
  console.log(`ratio ${(a / b).toFixed(2)} of bare (target >= 0.70); p99 API ${p99} ms, bare ${bareP99} ms (target < 10 ms)`);
}

if (process.argv.includes('--serve')) await serveBoth();
else await main();
