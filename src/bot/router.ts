/**
 * The interaction router, the same for every transport.
 *
 * For each interaction it runs the command (or the component's stored action, or autocomplete)
 * and answers exactly once:
 * - by default it defers ("thinking…") before any work, then edits the answer in: work may wait on
 *   the game's API, the disk or a picture, and a deferral sent first is never late;
 * - with `deferAfterMs` > 0, work that finishes within it is answered directly (no flash) and the
 *   rest defers when it passes (which a busy event loop can delay);
 * - every failure becomes one short ephemeral answer (errors.ts); a failure to send falls back to
 *   one plain message, and an interaction Discord already expired (10062) or that someone else
 *   answered (40060) is logged and dropped, never retried.
 * Each run is logged with its duration and outcome.
 */
import type { APIApplicationCommandInteractionDataOption } from 'discord-api-types/v10';
import { PermissionFlagsBits, RESTJSONErrorCodes } from 'discord-api-types/v10';
import type { Logger } from '../log.ts';
import { wallClockSchedule, type Schedule } from '../lib/schedule.ts';
import { NotFoundError } from '../upstream/errors.ts';
import { InvalidTagError } from '../upstream/tags.ts';
import { flattenOptions, type Choice, type CommandContext, type CommandModule } from './command.ts';
import { UserError, errorView } from './errors.ts';
import { format } from './format.ts';
import { warmLanguages } from '../i18n/index.ts';
import { validationErrors } from '../i18n/validation.ts';
import { LIMITS } from './limits.ts';
import { truncate } from './fit.ts';
import { renderView, type RenderedMessage } from './render.ts';
import type { Coordination } from '../core/coordination.ts';
import type { Core } from '../core/index.ts';
import type { BotServices } from './services.ts';
import { NO_PREMIUM } from './settings.ts';
import { Colour, notice, type ReplyView, type Scalar } from './view.ts';

export interface Incoming {
  id: string;
  kind: 'command' | 'component' | 'autocomplete';
  commandName?: string;
  options?: readonly APIApplicationCommandInteractionDataOption[];
  customId?: string;
  values?: string[];
  user: { id: string; name: string };
  guildId: string | null;
  channelId: string | null;
  locale: string;
  /** the server's Discord locale (guild_locale); null outside a server */
  guildLocale: string | null;
  /** the member's permissions in the channel; null outside a server */
  memberPermissions: bigint | null;
  attachmentSizeLimit: number;
  resolved: CommandContext['resolved'];
  transport: CommandContext['transport'];
}

/** How a transport answers one interaction. Each method is one Discord call. */
export interface Responder {
  /** initial response with a message (type 4) */
  reply(msg: RenderedMessage): Promise<void>;
  /** initial response that edits the component's message (type 7) */
  update(msg: RenderedMessage): Promise<void>;
  /** "thinking…" (type 5) */
  defer(ephemeral: boolean): Promise<void>;
  /** acknowledge a component without a visible change (type 6) */
  deferUpdate(): Promise<void>;
  editOriginal(msg: RenderedMessage): Promise<void>;
  deleteOriginal(): Promise<void>;
  followUp(msg: RenderedMessage): Promise<void>;
  autocomplete(choices: Choice[]): Promise<void>;
}

/**
 * 0: defer before the work. A timer cannot promise Discord's 3 s window: the first /player after
 * start-up does 2–4 s of work whose synchronous stretches hold the timer back. bench:bot on the
 * 2-core machine at load average 20–25 measured the cold first response at p50 280 ms, p99 460 ms
 * with a 100 ms timer (1.5 s with the old 1.5 s one), and at p50 33 ms, p99 105 ms when it defers
 * first. The cost is a brief "thinking…" before answers that would have been quick.
 */
export const DEFER_AFTER_MS = 0;

export interface RouterOptions {
  /** answer directly when the work is done within this, else defer; 0 defers before the work (default DEFER_AFTER_MS) */
  deferAfterMs?: number;
  /** autocomplete cannot be deferred: past this, answer with no choices (default 2000 ms) */
  autocompleteBudgetMs?: number;
  /** when the deadlines above fire (default: the wall clock; tests fire them themselves) */
  schedule?: Schedule;
}

/** A Discord API error as both discord.js and @discordjs/rest throw it. */
function apiCode(e: unknown): number | undefined {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'number' ? code : undefined;
}

const MANAGE = PermissionFlagsBits.ManageGuild | PermissionFlagsBits.Administrator;

/** The outcome of an interaction another delivery of it is answering. */
export const DUPLICATE = 'duplicate';

/**
 * Per-member cooldowns of commands: a claim on core.coordination, so in a cluster a member who
 * just ran a command on one process meets the cooldown on every other (Redis), and in one process
 * it is memory.
 */
export class Cooldowns {
  constructor(private readonly coordination: Coordination) {}

  /** Seconds left before `key` may run again, or 0 (and the cooldown starts now). */
  async take(key: string, seconds: number): Promise<number> {
    const claim = `cooldown:${key}`;
    if (await this.coordination.claim(claim, seconds * 1000)) return 0;
    return Math.max(1, Math.ceil((await this.coordination.claimExpiresIn(claim)) / 1000));
  }
}

export class Router {
  private readonly deferAfterMs: number;
  private readonly autocompleteBudgetMs: number;
  private readonly schedule: Schedule;
  private readonly log: Logger;

  constructor(
    private readonly core: Core,
    private readonly bot: BotServices,
    opts: RouterOptions = {},
  ) {
    this.deferAfterMs = Math.min(opts.deferAfterMs ?? DEFER_AFTER_MS, LIMITS.initialResponseMs - 500);
    this.autocompleteBudgetMs = opts.autocompleteBudgetMs ?? 2000;
    this.schedule = opts.schedule ?? wallClockSchedule;
    this.log = core.logger.child({ component: 'bot' });
    // Compiled here, before the first interaction, not inside its 3 s window.
    warmLanguages();
  }

  /** Answers one interaction; resolves with the outcome that was logged (ok, refused, failed...). */
  /**
   * Answers an interaction as a transport received it (gateway, POST /interactions): once across
   * processes. The same interaction delivered twice — a shard run by two processes, a load
   * balancer retrying a POST — is answered by whichever delivery claims its id first (one store
   * round trip; Discord would refuse a second answer anyway, 40060); the other gets DUPLICATE.
   * The claim outlives the interaction's token (15 min).
   */
  async deliver(i: Incoming, r: Responder): Promise<string> {
    if (!(await this.core.coordination.claim(`interaction:${i.id}`, LIMITS.tokenLifetimeMs))) {
      this.log.warn({ ref: i.id, kind: i.kind }, 'interaction already taken by another delivery');
      return DUPLICATE;
    }
    return this.handle(i, r);
  }

  async handle(i: Incoming, r: Responder): Promise<string> {
    const started = Date.now();
    let outcome = 'ok';
    try {
      if (i.kind === 'autocomplete') await this.autocomplete(i, r);
      else outcome = await this.execute(i, r);
    } catch (e) {
      outcome = 'crashed';
      this.log.error({ err: e, ref: i.id }, 'interaction handling crashed');
    } finally {
      this.log.info(
        { ref: i.id, kind: i.kind, command: i.commandName, guild: i.guildId, ms: Date.now() - started, outcome },
        'interaction',
      );
    }
    return outcome;
  }

  /** The context handlers see. */
  async context(i: Incoming): Promise<CommandContext> {
    const guild = i.guildId ? await this.bot.settings.get(i.guildId) : null;
    const premium = guild ? await this.bot.settings.premium(guild) : NO_PREMIUM;
    return {
      core: this.core,
      bot: this.bot,
      fmt: format(i.locale),
      user: i.user,
      guildId: i.guildId,
      guildLocale: i.guildLocale,
      channelId: i.channelId,
      canManageGuild: i.memberPermissions !== null && (i.memberPermissions & MANAGE) !== 0n,
      guild,
      premium,
      resolved: i.resolved,
      ref: i.id,
      transport: i.transport,
    };
  }

  private async autocomplete(i: Incoming, r: Responder): Promise<void> {
    const mod = i.commandName ? this.bot.commands.get(i.commandName) : undefined;
    const { focused } = flattenOptions(i.options);
    let choices: Choice[] = [];
    if (mod?.autocomplete && focused) {
      const work = (async () => mod.autocomplete!(focused, await this.context(i)))();
      let cancel = () => {};
      const late = new Promise<Choice[]>((resolve) => {
        cancel = this.schedule(this.autocompleteBudgetMs, () => resolve([]));
      });
      try {
        choices = await Promise.race([work, late]);
      } catch (e) {
        this.log.warn({ err: e, ref: i.id }, 'autocomplete failed');
      } finally {
        cancel();
      }
    }
    const fitted = choices.slice(0, LIMITS.autocompleteChoices).map((c) => ({
      name: truncate(c.name, LIMITS.choiceName) || String(c.value),
      value: typeof c.value === 'string' ? [...c.value].slice(0, LIMITS.choiceValue).join('') : c.value,
    }));
    try {
      await r.autocomplete(fitted);
    } catch (e) {
      this.sendFailed(e, i);
    }
  }

  /** Finds the module and arguments of a command or a component, and checks who may run it. */
  private async resolve(i: Incoming, ctx: CommandContext): Promise<{ mod: CommandModule<unknown>; args: Record<string, Scalar> }> {
    let name = i.commandName;
    let args: Record<string, Scalar> = {};
    if (i.kind === 'component') {
      const actions = await this.bot.components.load(i.customId ?? '');
      const index = i.values?.length ? Number(i.values[0]) : 0;
      const action = actions?.[index];
      if (!action) {
        throw new UserError('error.expiredButton', {}, Colour.info);
      }
      name = action.command;
      args = { ...action.args };
    } else {
      args = flattenOptions(i.options).values;
    }
    const mod = name ? this.bot.commands.get(name) : undefined;
    if (!mod) throw new UserError('error.unknownCommand', {}, Colour.info);
    if (mod.guildOnly && !ctx.guildId) throw new UserError('error.guildOnly', { command: name! }, Colour.info);
    return { mod, args };
  }

  private async run(i: Incoming, ctx: CommandContext, mod: CommandModule<unknown>, raw: Record<string, Scalar>): Promise<ReplyView> {
    const parsed = mod.args.safeParse(raw, { error: validationErrors(ctx.fmt.lang) });
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw new UserError('error.badOptions', { option: first?.path.join('.') || '—', problem: first?.message ?? '' });
    }
    const args = parsed.data;
    if (mod.needsManageGuild?.(args) && !ctx.canManageGuild) {
      throw new UserError('error.manageServer', {}, Colour.warn);
    }
    if (i.kind === 'command' && mod.cooldownSeconds) {
      const seconds = ctx.premium.keyed ? Math.ceil(mod.cooldownSeconds / 2) : mod.cooldownSeconds;
      // A store outage must not stop the bot: without the shared counter, no cooldown.
      const wait = await this.bot.cooldowns.take(`${ctx.user.id}:${mod.definition.name}`, seconds).catch((e: unknown) => {
        this.log.warn({ err: e }, 'cooldowns unavailable');
        return 0;
      });
      if (wait > 0) {
        throw new UserError('error.cooldown', { command: mod.definition.name, wait: ctx.fmt.duration(wait) }, Colour.info);
      }
    }
    return mod.run(args, ctx);
  }

  /**
   * Runs the work after a deferral, or against the clock: the answer goes out directly when ready
   * in time, or after a deferral otherwise. Returns the outcome for the log.
   */
  private async execute(i: Incoming, r: Responder): Promise<string> {
    const isComponent = i.kind === 'component';
    // A command's module is known at once, so a private command's deferral is private too.
    let deferEphemeral = !isComponent && i.commandName !== undefined && this.bot.commands.get(i.commandName)?.ephemeral === true;
    let outcome = 'ok';

    const deferral: { done?: Promise<boolean>; update?: boolean; ephemeral?: boolean } = {};
    const startDefer = () => {
      deferral.update = isComponent;
      deferral.ephemeral = deferEphemeral;
      deferral.done = (deferral.update ? r.deferUpdate() : r.defer(deferEphemeral)).then(
        () => true,
        (e) => {
          this.sendFailed(e, i);
          return false;
        },
      );
    };
    let cancelDefer = () => {};
    if (this.deferAfterMs <= 0) startDefer();
    else cancelDefer = this.schedule(this.deferAfterMs, startDefer);

    const fmt = format(i.locale);
    let msg: RenderedMessage;
    try {
      let view: ReplyView;
      try {
        const ctx = await this.context(i);
        const { mod, args } = await this.resolve(i, ctx);
        deferEphemeral = mod.ephemeral === true;
        view = await this.run(i, ctx, mod, args);
        if (mod.ephemeral) view = { ...view, ephemeral: true };
      } catch (e) {
        // A member's mistake (a bad tag, an unknown one) is an answer, not a failure of ours.
        const expected = e instanceof UserError || e instanceof InvalidTagError || e instanceof NotFoundError;
        outcome = expected ? 'refused' : 'failed';
        if (!expected) this.log.warn({ err: e, ref: i.id }, 'command failed');
        view = errorView(e, i.id, fmt);
      }
      msg = await renderView(view, this.bot.components, { attachmentSizeLimit: i.attachmentSizeLimit, fmt });
    } catch (e) {
      // Rendering itself failed (the component store is down): answer in plain words.
      this.log.error({ err: e, ref: i.id }, 'rendering the reply failed');
      outcome = 'failed';
      msg = plain(errorView(e, i.id, fmt));
    } finally {
      cancelDefer();
    }

    try {
      if (deferral.done) {
        if (!(await deferral.done)) return 'expired';
        await this.afterDefer(r, deferral.update === true, deferral.ephemeral === true, msg);
      } else if (isComponent && !msg.ephemeral) {
        await r.update(msg);
      } else {
        await r.reply(msg);
      }
    } catch (e) {
      if (!this.sendFailed(e, i)) return 'expired';
      await this.fallback(r, i, deferral.done !== undefined);
      return 'fallback';
    }
    return outcome;
  }

  private async afterDefer(r: Responder, deferredUpdate: boolean, deferEphemeral: boolean, msg: RenderedMessage): Promise<void> {
    if (deferredUpdate) {
      // A deferred update: the message is the component's; private answers go in a follow-up.
      if (msg.ephemeral) await r.followUp(msg);
      else await r.editOriginal(msg);
      return;
    }
    if (msg.ephemeral && !deferEphemeral) {
      // A public "thinking…" cannot become private: remove it and answer privately.
      await r.deleteOriginal();
      await r.followUp(msg);
      return;
    }
    await r.editOriginal(msg);
  }

  /** Logs a failed Discord call; false when the interaction is beyond answering (10062/40060/50027). */
  private sendFailed(e: unknown, i: Incoming): boolean {
    const code = apiCode(e);
    if (code === RESTJSONErrorCodes.UnknownInteraction || code === RESTJSONErrorCodes.InteractionHasAlreadyBeenAcknowledged || code === RESTJSONErrorCodes.InvalidWebhookToken) {
      this.log.warn({ ref: i.id, code }, 'interaction can no longer be answered');
      return false;
    }
    this.log.error({ err: e, ref: i.id, code }, 'sending the reply failed');
    return true;
  }

  /** The one fallback: a plain private message saying the reply could not be shown. */
  private async fallback(r: Responder, i: Incoming, acknowledged: boolean): Promise<void> {
    const fmt = format(i.locale);
    const msg = plain(notice(fmt.t('error.refused.title'), fmt.t('error.refused.body', { ref: i.id }), Colour.error));
    try {
      if (acknowledged) await r.followUp(msg);
      else await r.reply(msg);
    } catch (e) {
      this.sendFailed(e, i);
    }
  }
}

/** A reply without components (no store needed), for when rendering itself failed. */
function plain(view: ReplyView): RenderedMessage {
  return {
    body: { content: '', embeds: view.embeds ?? [], components: [], attachments: [], flags: 64 },
    files: [],
    ephemeral: true,
  };
}
