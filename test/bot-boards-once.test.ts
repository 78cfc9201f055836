/**
 * Channel leaderboards with two bot processes: both read the same boards from the durable store
 * and both run the schedule, yet each board is edited once each time it is due, and a refresh
 * button pressed on both at once refreshes once. The two processes are two bot service sets over
 * stores and coordination that are shared — in memory (ROLE=all), and on the real Redis
 * (REDIS_URL, as in CI; keys under this suite's prefix, deleted after).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBotServices, type BotServices } from '../src/bot/services.ts';
import type { ChannelPoster } from '../src/bot/leaderboards.ts';
import { BOARD_PERMISSIONS } from '../src/bot/permissions.ts';
import type { RenderedMessage } from '../src/bot/render.ts';
import { UserError } from '../src/bot/errors.ts';
import { startWorld, type TestWorld } from './support/world.ts';
import { RUN_REDIS } from './support/stores.ts';

const START = Date.UTC(2026, 5, 1, 12);
const MIN = 60_000;

/** One process's Discord side: what it posted and edited. */
class RecordingPoster implements ChannelPoster {
  readonly edits: string[] = [];
  private next = 0;
  constructor(private readonly name: string) {}
  async botPermissions(): Promise<bigint> {
    return BOARD_PERMISSIONS.reduce((all, [bit]) => all | bit, 0n);
  }
  async post(_channelId: string, _msg: RenderedMessage): Promise<string> {
    return `${this.name}-${++this.next}`;
  }
  async edit(_channelId: string, messageId: string): Promise<void> {
    this.edits.push(messageId);
  }
  async delete(): Promise<void> {}
}

function twoProcesses(name: string, redis: boolean) {
  describe(name, () => {
    let w: TestWorld;
    let a: BotServices;
    let b: BotServices;
    const pa = new RecordingPoster('a');
    const pb = new RecordingPoster('b');

    beforeAll(async () => {
      w = await startWorld({ startMs: START, ...(redis ? { redis: true, env: { REDIS_URL: process.env.REDIS_URL! } } : {}) });
      expect(w.core.coordination.kind).toBe(redis ? 'redis' : 'memory');
      a = await createBotServices(w.core, { now: w.now });
      b = await createBotServices(w.core, { now: w.now });
      a.boards.setPoster(pa);
      b.boards.setPoster(pb);
    });
    afterAll(async () => {
      await w?.close();
    });

    it('edits each board once per interval, whichever process gets there', async () => {
      const guild = 'g1';
      const made = [];
      for (const [i, channelId] of ['c1', 'c2', 'c3'].entries()) {
        made.push(
          await a.boards.create(
            guild,
            { channelId, source: { kind: 'club', tag: w.sim.world.clubTag(i) }, intervalMinutes: 10, createdBy: 'admin', locale: 'en-US' },
            { keyed: true, premium: true },
          ),
        );
      }
      for (let round = 1; round <= 3; round++) {
        w.clock.advance(10 * MIN);
        const [ra, rb] = await Promise.all([a.boards.tick(), b.boards.tick(), a.boards.tick()]);
        expect(ra!.refreshed + rb!.refreshed).toBeLessThanOrEqual(3);
        // every board edited exactly once this round, by one process or the other
        const edits = [...pa.edits, ...pb.edits];
        for (const board of made) expect(edits.filter((id) => id === board.messageId)).toHaveLength(round);
        // nothing more to do until the next interval
        expect((await Promise.all([a.boards.tick(), b.boards.tick()])).map((r) => r.refreshed)).toEqual([0, 0]);
      }
    });

    it('refreshes once when the button is pressed on both processes at once', async () => {
      const [board] = await a.boards.list('g1');
      w.clock.advance(2 * MIN);
      const answers = await Promise.allSettled([a.boards.refreshByButton('g1', board!.id), b.boards.refreshByButton('g1', board!.id)]);
      expect(answers.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const refused = answers.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(refused.reason).toBeInstanceOf(UserError);
      expect((refused.reason as UserError).key).toBe('error.boardJustRefreshed');
    });
  });
}

twoProcesses('two bot processes in one (memory coordination)', false);
describe.runIf(RUN_REDIS)('on Redis', () => twoProcesses('two bot processes sharing Redis', true));
