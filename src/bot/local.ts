/**
 * Running commands without Discord, for `starr try` and the benchmarks: a slash command typed as
 * text goes through the same router, context and rendering as a real interaction, and the reply
 * is kept instead of sent. Buttons and select options can be pressed by their label.
 */
import { randomBytes } from 'node:crypto';
import { PermissionFlagsBits } from 'discord-api-types/v10';
import type { Choice } from './command.ts';
import { parseInvocation } from './invocation.ts';
import { LIMITS } from './limits.ts';
import type { RenderedMessage } from './render.ts';
import type { Incoming, Responder, Router } from './router.ts';
import type { BotServices } from './services.ts';

/** Keeps what the router sends; the last message is what the member would see. */
export class LocalResponder implements Responder {
  readonly calls: string[] = [];
  messages: RenderedMessage[] = [];
  /** the router's outcome: ok, refused (the member's mistake), failed, ... */
  outcome = '';
  choices: Choice[] | undefined;

  async reply(msg: RenderedMessage) {
    this.calls.push('reply');
    this.messages.push(msg);
  }
  async update(msg: RenderedMessage) {
    this.calls.push('update');
    this.messages.push(msg);
  }
  async defer(_ephemeral: boolean) {
    this.calls.push('defer');
  }
  async deferUpdate() {
    this.calls.push('deferUpdate');
  }
  async editOriginal(msg: RenderedMessage) {
    this.calls.push('edit');
    this.messages.push(msg);
  }
  async deleteOriginal() {
    this.calls.push('delete');
  }
  async followUp(msg: RenderedMessage) {
    this.calls.push('followUp');
    this.messages.push(msg);
  }
  async autocomplete(choices: Choice[]) {
    this.calls.push('autocomplete');
    this.choices = choices;
  }

  get last(): RenderedMessage | undefined {
    return this.messages.at(-1);
  }
}

export interface LocalUser {
  userId: string;
  guildId: string | null;
  locale: string;
  /** the member has Manage Server */
  manager: boolean;
}

function base(u: LocalUser): Omit<Incoming, 'kind'> {
  return {
    id: BigInt(`0x${randomBytes(7).toString('hex')}`).toString(),
    user: { id: u.userId, name: 'you' },
    guildId: u.guildId,
    channelId: u.guildId ? '1' : null,
    locale: u.locale,
    guildLocale: u.guildId ? u.locale : null,
    memberPermissions: u.guildId ? (u.manager ? PermissionFlagsBits.ManageGuild : PermissionFlagsBits.ViewChannel) : null,
    attachmentSizeLimit: LIMITS.defaultAttachmentSize,
    resolved: { users: {}, channels: {} },
    transport: 'cli',
  };
}

/** Runs `/command options...` (or its autocomplete for `complete`) and returns what came back. */
export async function runLocal(
  router: Router,
  services: BotServices,
  text: string,
  user: LocalUser,
  opts: { complete?: string } = {},
): Promise<LocalResponder> {
  const inv = parseInvocation(text, services.commands.definitions(), opts.complete ? { focus: opts.complete } : {});
  const r = new LocalResponder();
  r.outcome = await router.handle(
    { ...base(user), kind: opts.complete ? 'autocomplete' : 'command', commandName: inv.command.name, options: inv.options },
    r,
  );
  return r;
}

export class NoSuchComponentError extends Error {
  override name = 'NoSuchComponentError';
}

/** Presses the button or select option labelled `label` on `msg`. */
export async function pressLocal(router: Router, msg: RenderedMessage, label: string, user: LocalUser): Promise<LocalResponder> {
  const want = label.trim().toLowerCase();
  for (const row of msg.body.components) {
    for (const c of row.components) {
      if (c.type === 2 && 'custom_id' in c && !c.disabled && (c.label ?? '').toLowerCase() === want) {
        const r = new LocalResponder();
        r.outcome = await router.handle({ ...base(user), kind: 'component', customId: c.custom_id }, r);
        return r;
      }
      if (c.type === 3) {
        const i = c.options.findIndex((o) => o.label.toLowerCase() === want);
        if (i >= 0) {
          const r = new LocalResponder();
          r.outcome = await router.handle({ ...base(user), kind: 'component', customId: c.custom_id, values: [c.options[i]!.value] }, r);
          return r;
        }
      }
    }
  }
  throw new NoSuchComponentError(`No button or menu option is labelled "${label}".`);
}
