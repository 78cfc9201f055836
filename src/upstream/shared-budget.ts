/**
 * The upstream tokens' buckets shared by the processes of a cluster (REDIS_URL): one GCRA bucket
 * per official token in Redis, so two workers and two api processes together still send at most
 * UPSTREAM_RPS per token. Each decision is one Lua script (atomic): the first token, round-robin,
 * whose bucket has room takes the request; else the script says when the earliest one will.
 *
 * Interactive requests keep priority across processes: a poll may not use the last `reserve` places
 * of a token's burst, so a user's request finds room at once even while every worker polls flat
 * out (polls still get the full sustained rate). Within one process the budget's queue serves
 * interactive waiters first, as without Redis.
 *
 * Buckets are keyed by a hash of the token, never the token itself: whoever reads Redis learns
 * nothing that would let them call the API.
 */
import { createHash } from 'node:crypto';
import type { Redis } from '../store/redis.ts';
import type { Priority, SharedBuckets, SharedTake } from './budget.ts';

// KEYS: the buckets; ARGV: now (ms), interval at full speed (ms), burst, reserve for polls, first index.
// A bucket: tat (GCRA theoretical arrival time), pen (skipped until), speed (share of rps).
const TAKE = `
local now = tonumber(ARGV[1])
local base = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local reserve = tonumber(ARGV[4])
local start = tonumber(ARGV[5])
local n = #KEYS
local earliest = nil
for k = 0, n - 1 do
  local i = (start + k) % n
  local key = KEYS[i + 1]
  local v = redis.call('HMGET', key, 'tat', 'pen', 'speed')
  local tat = tonumber(v[1]) or 0
  local pen = tonumber(v[2]) or 0
  local speed = tonumber(v[3]) or 1
  local interval = base / speed
  local ready = math.max(pen, tat - (burst - 1 - reserve) * interval)
  if ready <= now then
    local ntat = math.max(tat, now) + interval
    redis.call('HSET', key, 'tat', string.format('%.3f', ntat))
    redis.call('PEXPIRE', key, math.ceil(math.max(ntat, pen) - now) + 60000)
    return {i, tostring(speed)}
  end
  if earliest == nil or ready < earliest then earliest = ready end
end
return {-1, string.format('%.3f', earliest)}
`;

// KEYS[1]: the bucket; ARGV: now, penalty (ms), interval at full speed, burst, slowest speed.
const PENALISE = `
local now = tonumber(ARGV[1])
local base = tonumber(ARGV[3])
local burst = tonumber(ARGV[4])
local v = redis.call('HMGET', KEYS[1], 'tat', 'pen', 'speed')
local tat = tonumber(v[1]) or 0
local pen = math.max(tonumber(v[2]) or 0, now + tonumber(ARGV[2]))
local speed = math.max(tonumber(ARGV[5]), (tonumber(v[3]) or 1) / 2)
tat = math.max(tat, pen + (burst - 1) * base / speed)
redis.call('HSET', KEYS[1], 'tat', string.format('%.3f', tat), 'pen', string.format('%.3f', pen), 'speed', tostring(speed))
redis.call('PEXPIRE', KEYS[1], math.ceil(tat - now) + 60000)
return 1
`;

// KEYS[1]: the bucket; ARGV: speed regained per success.
const SUCCEEDED = `
local speed = tonumber(redis.call('HGET', KEYS[1], 'speed') or '1')
if speed < 1 then redis.call('HSET', KEYS[1], 'speed', tostring(math.min(1, speed + tonumber(ARGV[1])))) end
return 1
`;

/** The Redis key of a token's bucket: a digest of the token, not the token. */
export function bucketKey(token: string): string {
  return `budget:${createHash('sha256').update(token).digest('hex').slice(0, 24)}`;
}

export class RedisBuckets implements SharedBuckets {
  private readonly keys: string[];

  constructor(
    private readonly client: Redis,
    tokens: readonly string[],
  ) {
    this.keys = tokens.map(bucketKey);
  }

  async take(priority: Priority, now: number, o: { rps: number; burst: number; from: number }): Promise<SharedTake> {
    // A fifth of the burst (at least one place when the burst allows it) is kept for users.
    const reserve = priority === 'poll' && o.burst > 1 ? Math.max(1, Math.floor(o.burst / 5)) : 0;
    const [i, v] = (await this.client.eval(TAKE, this.keys.length, ...this.keys, String(now), String(1000 / o.rps), String(o.burst), String(reserve), String(o.from))) as [
      number,
      string,
    ];
    return i >= 0 ? { token: i, speed: Number(v) } : { readyAt: Number(v) };
  }

  async penalise(token: number, now: number, penaltyMs: number, o: { rps: number; burst: number; minSpeed: number }): Promise<void> {
    const key = this.keys[token];
    if (key) await this.client.eval(PENALISE, 1, key, String(now), String(penaltyMs), String(1000 / o.rps), String(o.burst), String(o.minSpeed));
  }

  async succeeded(token: number, step: number): Promise<void> {
    const key = this.keys[token];
    if (key) await this.client.eval(SUCCEEDED, 1, key, String(step));
  }
}
