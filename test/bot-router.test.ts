/**
 * The router's promises at the transport boundary, with a responder that records each Discord
 * call and can fail like Discord does: one answer per interaction, deferral when the work is slow,
 * a private answer after a public deferral, one fallback when Discord refuses a reply, nothing
 * more once an interaction expired, and autocomplete that never waits past its budget.
 * The deadlines fire when the test says (ManualSchedule), never by the wall clock: "fast" is work
 * that finished before its deadline fired, "slow" is work waiting on a gate the test opens after.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CommandSet, defineCommand, type CommandModule } from '../src/bot/command.ts';
import { LocalResponder, type LocalUser } from '../src/bot/local.ts';
import type { RenderedMessage } from '../src/bot/render.ts';
import { Router, type Incoming } from '../src/bot/router.ts';
import { createBotServices, type BotServices } from '../src/bot/services.ts';
import { LIMITS } from '../src/bot/limits.ts';
import { UserError } from '../src/bot/errors.ts';
import { ManualSchedule } from './support/manual-schedule.ts';
import { startWorld, type TestWorld } from './support/world.ts';

const DEFER_AFTER_MS = 1200;
const AUTOCOMPLETE_BUDGET_MS = 1800;

let w: TestWorld;
let router: Router;
let deadlines: ManualSchedule;
let services: BotServices;

/** The "slow" command's work waits on this gate until the test opens it. */
function newGate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}
let gate = newGate();

const commands = new CommandSet([
  defineCommand({
    definition: { name: 'fast', description: 'answers at once' },
    args: z.object({}),
    run: async () => ({ content: 'fast answer' }),
    autocomplete: async () => [{ name: 'one', value: '1' }],
  }),
  defineCommand({
    definition: { name: 'slow', description: 'waits for the test', options: [{ type: 5, name: 'fail', description: 'fail at the end' }] },
    args: z.object({ fail: z.boolean().optional() }),
    run: async (a) => {
      await gate.opened;
      if (a.fail) throw new UserError('error.whichChannel');
      return { content: 'slow answer' };
    },
    autocomplete: () => new Promise(() => {}),
  }),
  defineCommand({
    definition: { name: 'secret', description: 'a private answer that waits for the test' },
    args: z.object({}),
    ephemeral: true,
    run: async () => {
      await gate.opened;
      return { content: 'private answer' };
    },
  }),
  defineCommand({
    definition: { name: 'count', description: 'a bounded number', options: [{ type: 4, name: 'n', description: 'how many' }] },
    args: z.object({ n: z.number().int().min(1) }),
    run: async (a) => ({ content: `${a.n}` }),
  }),
  defineCommand({
    definition: { name: 'boom', description: 'a bug' },
    args: z.object({}),
    run: async () => {
      throw new TypeError('undefined is not a function');
    },
  }),
] as CommandModule<unknown>[]);

beforeAll(async () => {
  deadlines = new ManualSchedule();
  w = await startWorld({ startMs: Date.UTC(2026, 5, 1) });
  services = await createBotServices(w.core, { commands, now: w.now });
  router = new Router(w.core, services, { deferAfterMs: DEFER_AFTER_MS, autocompleteBudgetMs: AUTOCOMPLETE_BUDGET_MS, schedule: deadlines.schedule });
});

beforeEach(() => {
  gate = newGate();
  // a fresh schedule per test: a deadline a test left behind cannot fire into the next one
  deadlines.fire();
});

afterAll(async () => {
  await w?.close();
});

const user: LocalUser = { userId: 'u1', guildId: 'g1', locale: 'en-US', manager: false };

function incoming(name: string, options: Incoming['options'] = [], kind: Incoming['kind'] = 'command'): Incoming {
  return {
    id: String(Math.random()).slice(2),
    kind,
    commandName: name,
    options,
    user: { id: user.userId, name: 'me' },
    guildId: user.guildId,
    channelId: '1',
    locale: 'en-US',
    guildLocale: 'en-US',
    memberPermissions: 0n,
    attachmentSizeLimit: 10 * 1024 * 1024,
    resolved: { users: {}, channels: {} },
    transport: 'cli',
  };
}

/** A responder whose calls can fail with Discord's JSON error codes. */
class FailingResponder extends LocalResponder {
  constructor(private readonly failures: Partial<Record<string, number>>) {
    super();
  }
  private check(call: string) {
    const code = this.failures[call];
    if (code !== undefined) {
      delete this.failures[call];
      this.calls.push(`${call}!${code}`);
      throw Object.assign(new Error(`Discord refused ${call}`), { code });
    }
  }
  override async reply(msg: RenderedMessage) {
    this.check('reply');
    await super.reply(msg);
  }
  override async defer(ephemeral: boolean) {
    this.check('defer');
    await super.defer(ephemeral);
  }
  override async editOriginal(msg: RenderedMessage) {
    this.check('edit');
    await super.editOriginal(msg);
  }
}

describe('router with its default deferral', () => {
  /** Records the visibility each deferral asked for. */
  class Recording extends LocalResponder {
    deferrals: boolean[] = [];
    override async defer(ephemeral: boolean) {
      this.deferrals.push(ephemeral);
      await super.defer(ephemeral);
    }
  }
  let byDefault: Router;
  const scheduled: number[] = [];
  beforeAll(async () => {
    const services = await createBotServices(w.core, { commands, now: w.now });
    byDefault = new Router(w.core, services, { schedule: (ms, fn) => (scheduled.push(ms), deadlines.schedule(ms, fn)) });
  });

  it('defers before any work, so the first response never waits for it; then edits the answer in', async () => {
    const r = new Recording();
    const done = byDefault.handle(incoming('slow'), r);
    // sent at once: no deadline had to fire, and the work is still waiting at its gate
    expect(r.calls).toEqual(['defer']);
    expect(r.deferrals).toEqual([false]);
    gate.open();
    expect(await done).toBe('ok');
    expect(r.calls).toEqual(['defer', 'edit']);
    expect(r.last!.body.content).toBe('slow answer');
    expect(scheduled).toEqual([]);
  });

  it("a private command's deferral is private, so its answer needs no public placeholder removed", async () => {
    const r = new Recording();
    const done = byDefault.handle(incoming('secret'), r);
    expect(r.deferrals).toEqual([true]);
    gate.open();
    await done;
    expect(r.calls).toEqual(['defer', 'edit']);
    expect(r.last!.ephemeral).toBe(true);
  });
});

describe('router', () => {
  it('answers fast work with one reply', async () => {
    const r = new LocalResponder();
    const done = router.handle(incoming('fast'), r);
    // the deferral deadline is set as the work starts...
    expect(deadlines.pending).toEqual([DEFER_AFTER_MS]);
    expect(await done).toBe('ok');
    // ...and the work finished before it fired: no deferral, and nothing left to fire
    expect(deadlines.pending).toEqual([]);
    expect(r.calls).toEqual(['reply']);
    expect(r.last!.body.content).toBe('fast answer');
  });

  it('never sets its deferral later than Discord allows, whatever it is told', async () => {
    const patient = new Router(w.core, services, { deferAfterMs: 10_000, schedule: deadlines.schedule });
    const r = new LocalResponder();
    const done = patient.handle(incoming('slow'), r);
    expect(deadlines.pending).toEqual([LIMITS.initialResponseMs - 500]);
    deadlines.fire();
    gate.open();
    await done;
    expect(r.calls).toEqual(['defer', 'edit']);
  });

  it('defers slow work, then edits the answer in', async () => {
    const r = new LocalResponder();
    const done = router.handle(incoming('slow'), r);
    expect(deadlines.pending).toEqual([DEFER_AFTER_MS]);
    expect(r.calls).toEqual([]);
    expect(deadlines.fire()).toBe(1);
    expect(r.calls).toEqual(['defer']);
    gate.open();
    await done;
    expect(r.calls).toEqual(['defer', 'edit']);
    expect(r.last!.body.content).toBe('slow answer');
  });

  it('turns a public deferral into a private answer when the work fails', async () => {
    const r = new LocalResponder();
    const done = router.handle(incoming('slow', [{ name: 'fail', type: 5, value: true }]), r);
    expect(deadlines.fire()).toBe(1);
    expect(r.calls).toEqual(['defer']);
    gate.open();
    expect(await done).toBe('refused');
    expect(r.calls).toEqual(['defer', 'delete', 'followUp']);
    expect(r.last!.ephemeral).toBe(true);
    expect(r.last!.body.embeds[0]!.title).toBe('Which channel?');
  });

  it('answers a bug privately with a reference, and logs it as failed', async () => {
    const r = new LocalResponder();
    const i = incoming('boom');
    expect(await router.handle(i, r)).toBe('failed');
    expect(r.calls).toEqual(['reply']);
    expect(r.last!.body.embeds[0]!.description).toContain(i.id);
  });

  it('sends one plain fallback when Discord refuses the reply', async () => {
    const r = new FailingResponder({ reply: 50035 });
    expect(await router.handle(incoming('fast'), r)).toBe('fallback');
    expect(r.calls).toEqual(['reply!50035', 'reply']);
    expect(r.last!.body.embeds[0]!.title).toBe('Could not show this reply');
    expect(r.last!.ephemeral).toBe(true);
  });

  it('stops at an expired interaction: no edit, no fallback', async () => {
    const r = new FailingResponder({ defer: 10062 });
    const done = router.handle(incoming('slow'), r);
    expect(deadlines.fire()).toBe(1);
    expect(r.calls).toEqual(['defer!10062']);
    gate.open();
    expect(await done).toBe('expired');
    expect(r.calls).toEqual(['defer!10062']);
  });

  it('treats 40060 (someone else answered) as final', async () => {
    const r = new FailingResponder({ reply: 40060 });
    expect(await router.handle(incoming('fast'), r)).toBe('expired');
    expect(r.calls).toEqual(['reply!40060']);
  });

  it('answers autocomplete within its budget, with nothing when the work is late', async () => {
    const quick = new LocalResponder();
    const answered = router.handle(incoming('fast', [{ name: 'q', type: 3, value: 'o', focused: true }], 'autocomplete'), quick);
    expect(deadlines.pending).toEqual([AUTOCOMPLETE_BUDGET_MS]);
    await answered;
    expect(deadlines.pending).toEqual([]);
    expect(quick.choices).toEqual([{ name: 'one', value: '1' }]);
    const late = new LocalResponder();
    const givenUp = router.handle(incoming('slow', [{ name: 'q', type: 3, value: 'o', focused: true }], 'autocomplete'), late);
    expect(late.calls).toEqual([]);
    // the slow autocomplete never finishes: only its budget running out answers
    expect(deadlines.fire()).toBe(1);
    await givenUp;
    expect(late.calls).toEqual(['autocomplete']);
    expect(late.choices).toEqual([]);
  });

  it("explains options that do not validate in the member's language, zod's words included", async () => {
    const asked = (locale: string) => ({ ...incoming('count', [{ type: 4, name: 'n', value: 0 }]), locale });
    const en = new LocalResponder();
    await router.handle(asked('en-US'), en);
    const de = new LocalResponder();
    await router.handle(asked('de'), de);
    const enEmbed = en.last!.body.embeds[0]!;
    const deEmbed = de.last!.body.embeds[0]!;
    expect(enEmbed.title).toBe('Check the options');
    expect(deEmbed.title).not.toBe(enEmbed.title);
    expect(JSON.stringify(enEmbed)).toContain('Too small');
    expect(JSON.stringify(deEmbed)).toContain('Zu klein');
    expect(JSON.stringify(deEmbed)).not.toContain('Too small');
  });

  it('says so for an unknown command or an expired button', async () => {
    const a = new LocalResponder();
    await router.handle(incoming('gone'), a);
    expect(a.last!.body.embeds[0]!.title).toBe('Unknown command');
    const b = new LocalResponder();
    await router.handle({ ...incoming('fast', [], 'component'), commandName: undefined, customId: 's:doesnotexist' }, b);
    expect(b.calls).toEqual(['reply']);
    expect(b.last!.ephemeral).toBe(true);
    expect(b.last!.body.embeds[0]!.title).toBe('This button has expired');
  });
});
