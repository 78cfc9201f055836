/**
 * The simulated Brawl Stars world: a deterministic game world (players, clubs, battles, rankings,
 * event rotation as a pure function of seed and virtual time) behind an HTTP server that speaks the
 * official API. Used for demo mode (no API token), the test suite, backfills and benchmarks.
 */
import type { AddressInfo } from 'node:net';
import { LOOPBACK_IPS, SimKeys, type TokenOptions } from './auth.ts';
import { SimClock, type VirtualClock } from './clock.ts';
import { Faults, type FaultConfig, type FaultController } from './faults.ts';
import { RequestLog } from './request-log.ts';
import { createSimServer } from './server.ts';
import { wallClockSchedule, type Schedule } from '../lib/schedule.ts';
import { World } from './world.ts';

export { World, RANKING_SIZE, BATTLELOG_SIZE } from './world.ts';
export { SimClock, type VirtualClock } from './clock.ts';
export { defaultFaults, type FaultConfig, type FaultController, type FaultUpdate } from './faults.ts';
export { encodeCursor, decodeCursor } from './paging.ts';
export type { LoggedRequest, RequestLogView } from './request-log.ts';

export interface SimOptions {
  /** defaults: 'starr', 5000 players, 500 clubs (config SIM_SEED, SIM_PLAYERS, SIM_CLUBS) */
  seed?: string;
  players?: number;
  clubs?: number;
  /** default 127.0.0.1 and an ephemeral port */
  host?: string;
  port?: number;
  /** default: a clock following real time */
  clock?: VirtualClock;
  faults?: Partial<FaultConfig>;
  /** when an injected latency ends: the wall clock by default; tests fire it themselves */
  schedule?: Schedule;
}

export interface SimServer {
  /** base URL of the official paths, e.g. http://127.0.0.1:40123/v1 */
  url: string;
  /** a bearer token the sim accepts from loopback callers */
  token: string;
  world: World;
  clock: VirtualClock;
  faults: FaultController;
  /** the requests of the official paths it received (GET /_sim/log on the server) */
  log: RequestLog;
  /** another key, e.g. one bound to other IPs (to see accessDenied.invalidIp) */
  issueToken(opts?: TokenOptions): string;
  close(): Promise<void>;
}

/** Adapts any VirtualClock to the one the server needs (resume/frozen are optional extras). */
function asSimClock(clock: VirtualClock | undefined): SimClock {
  if (!clock) return new SimClock();
  if (clock instanceof SimClock) return clock;
  const wrapped = new SimClock(undefined, () => clock.now());
  wrapped.set = (ms) => clock.set(ms);
  wrapped.advance = (ms) => clock.advance(ms);
  wrapped.now = () => clock.now();
  return wrapped;
}

export async function startSim(opts: SimOptions = {}): Promise<SimServer> {
  const seed = opts.seed ?? 'starr';
  const world = new World({ seed, players: opts.players ?? 5000, clubs: opts.clubs ?? 500 });
  const clock = asSimClock(opts.clock);
  const faults = new Faults(seed, () => clock.now(), opts.faults);
  const keys = new SimKeys(seed);
  const host = opts.host ?? '127.0.0.1';
  const loopback = host === '127.0.0.1' || host === 'localhost' || host === '::1';
  const token = keys.issue({ ips: loopback ? LOOPBACK_IPS : ['0.0.0.0/0', '::/0'] });
  const log = new RequestLog();
  const server = createSimServer({ world, clock, faults, keys, log, schedule: opts.schedule ?? wallClockSchedule });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const hostForUrl = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address === '0.0.0.0' ? '127.0.0.1' : addr.address;
  return {
    url: `http://${hostForUrl}:${addr.port}/v1`,
    token,
    world,
    clock: opts.clock ?? clock,
    faults,
    log,
    issueToken: (o) => keys.issue(o),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}
