/**
 * The HTTP interactions transport: POST /interactions on the service's HTTP server.
 *
 * - The Ed25519 signature (X-Signature-Ed25519) is checked with node:crypto over the timestamp
 *   followed by the raw body bytes, before any parsing; a bad or missing one is a 401 (Discord
 *   probes this on purpose and drops endpoints that accept forgeries). Timestamps more than five
 *   minutes off are refused too, so a captured request cannot be replayed later.
 * - PING is answered with PONG.
 * - Everything else goes to the router. Answers without files go back inline; an answer with
 *   files is a deferral inline (type 5, or 6 for a component) followed by a multipart PATCH of
 *   `@original` through the REST API — the safe pattern for uploads.
 */
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
import type { REST } from 'discord.js';
import { InteractionResponseType, InteractionType, Routes } from 'discord-api-types/v10';
import type { Logger } from '../log.ts';
import type { Choice } from './command.ts';
import { rawFiles } from './discord-rest.ts';
import { LIMITS, MessageFlag } from './limits.ts';
import type { RenderedMessage } from './render.ts';
import { DUPLICATE, type Incoming, type Responder, type Router } from './router.ts';

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the 32 raw key bytes follow it. */
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const MAX_SKEW_SECONDS = 300;

export function publicKeyFromHex(hex: string): KeyObject {
  if (!/^[0-9a-f]{64}$/i.test(hex)) throw new Error('the application public key is 64 hex characters');
  return createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, Buffer.from(hex, 'hex')]), format: 'der', type: 'spki' });
}

/** True when `signature` (hex) signs `timestamp + body` under `key`. */
export function verifySignature(key: KeyObject, signature: string | undefined, timestamp: string | undefined, body: Buffer): boolean {
  if (!signature || !timestamp || !/^[0-9a-f]{128}$/i.test(signature)) return false;
  try {
    return verify(null, Buffer.concat([Buffer.from(timestamp, 'utf8'), body]), key, Buffer.from(signature, 'hex'));
  } catch {
    return false;
  }
}

type Json = Record<string, any>;

/** Raw interaction JSON → the router's transport-free description. */
export function incomingFromJson(i: Json): Incoming | null {
  const user = i.member?.user ?? i.user;
  if (!user?.id) return null;
  const base = {
    id: String(i.id),
    user: { id: String(user.id), name: String(user.global_name ?? user.username ?? 'member') },
    guildId: i.guild_id ?? null,
    channelId: i.channel?.id ?? i.channel_id ?? null,
    locale: typeof i.locale === 'string' ? i.locale : 'en-US',
    guildLocale: typeof i.guild_locale === 'string' ? i.guild_locale : null,
    memberPermissions: typeof i.member?.permissions === 'string' ? BigInt(i.member.permissions) : null,
    attachmentSizeLimit: typeof i.attachment_size_limit === 'number' ? i.attachment_size_limit : LIMITS.defaultAttachmentSize,
    transport: 'http' as const,
  };
  const resolved: Incoming['resolved'] = { users: {}, channels: {} };
  for (const [id, u] of Object.entries((i.data?.resolved?.users ?? {}) as Record<string, Json>)) resolved.users[id] = String(u.global_name ?? u.username);
  for (const [id, c] of Object.entries((i.data?.resolved?.channels ?? {}) as Record<string, Json>)) {
    resolved.channels[id] = { name: String(c.name ?? id), type: Number(c.type ?? 0) };
  }
  switch (i.type) {
    case InteractionType.ApplicationCommand:
    case InteractionType.ApplicationCommandAutocomplete:
      if (typeof i.data?.name !== 'string') return null;
      return {
        ...base,
        kind: i.type === InteractionType.ApplicationCommand ? 'command' : 'autocomplete',
        commandName: i.data.name,
        options: Array.isArray(i.data.options) ? i.data.options : [],
        resolved,
      };
    case InteractionType.MessageComponent:
      if (typeof i.data?.custom_id !== 'string') return null;
      return { ...base, kind: 'component', customId: i.data.custom_id, values: Array.isArray(i.data.values) ? i.data.values.map(String) : undefined, resolved };
    default:
      return null;
  }
}

class AlreadyAnsweredError extends Error {
  readonly code = 40060;
  constructor() {
    super('Interaction has already been acknowledged.');
  }
}

/**
 * Answers one HTTP interaction: the first answer is the HTTP response, later ones REST calls
 * with the interaction token (no bot token needed).
 */
export class HttpResponder implements Responder {
  private answered = false;
  private sent: Promise<void>;
  private markSent!: () => void;
  /** resolves with the inline answer for the HTTP response */
  readonly inline: Promise<Json>;
  private resolveInline!: (body: Json) => void;

  constructor(
    private readonly rest: REST,
    private readonly appId: string,
    private readonly token: string,
  ) {
    this.inline = new Promise((resolve) => (this.resolveInline = resolve));
    this.sent = new Promise((resolve) => (this.markSent = resolve));
  }

  /** The HTTP server calls this once the response has left, so REST edits never overtake it. */
  responseSent(): void {
    this.markSent();
  }

  private answer(body: Json): Promise<void> {
    if (this.answered) return Promise.reject(new AlreadyAnsweredError());
    this.answered = true;
    this.resolveInline(body);
    return this.sent;
  }

  private original() {
    return Routes.webhookMessage(this.appId, this.token, '@original');
  }

  async reply(msg: RenderedMessage): Promise<void> {
    if (msg.files.length === 0) return this.answer({ type: InteractionResponseType.ChannelMessageWithSource, data: msg.body });
    await this.defer(msg.ephemeral);
    await this.editOriginal(msg);
  }

  async update(msg: RenderedMessage): Promise<void> {
    if (msg.files.length === 0) return this.answer({ type: InteractionResponseType.UpdateMessage, data: msg.body });
    await this.deferUpdate();
    await this.editOriginal(msg);
  }

  defer(ephemeral: boolean): Promise<void> {
    return this.answer({
      type: InteractionResponseType.DeferredChannelMessageWithSource,
      ...(ephemeral ? { data: { flags: MessageFlag.Ephemeral } } : {}),
    });
  }

  deferUpdate(): Promise<void> {
    return this.answer({ type: InteractionResponseType.DeferredMessageUpdate });
  }

  async editOriginal(msg: RenderedMessage): Promise<void> {
    const { flags: _flags, ...body } = msg.body;
    await this.rest.patch(this.original(), { body, files: rawFiles(msg), auth: false });
  }

  async deleteOriginal(): Promise<void> {
    await this.rest.delete(this.original(), { auth: false });
  }

  async followUp(msg: RenderedMessage): Promise<void> {
    await this.rest.post(Routes.webhook(this.appId, this.token), { body: msg.body, files: rawFiles(msg), auth: false, query: new URLSearchParams({ wait: 'true' }) });
  }

  autocomplete(choices: Choice[]): Promise<void> {
    return this.answer({ type: InteractionResponseType.ApplicationCommandAutocompleteResult, data: { choices } });
  }
}

export interface InteractionsRouteOptions {
  router: Router;
  rest: REST;
  publicKeyHex: string;
  logger: Logger;
  now?: () => number;
}

/** POST /interactions as a fastify plugin, with its own raw-body parser. */
export function interactionsRoute(opts: InteractionsRouteOptions): FastifyPluginAsync {
  const key = publicKeyFromHex(opts.publicKeyHex);
  const now = opts.now ?? Date.now;
  const log = opts.logger.child({ component: 'interactions' });
  const inflight = new Set<Promise<unknown>>();

  return async (app) => {
    // The signature covers the exact bytes: keep them, parse JSON only after verifying.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_req, body, done) => done(null, body));
    app.addHook('onClose', async () => {
      await Promise.allSettled([...inflight]);
    });

    const send = (reply: FastifyReply, status: number, body: unknown) =>
      reply.code(status).header('content-type', 'application/json').header('cache-control', 'no-store').send(JSON.stringify(body));

    app.post('/interactions', { config: { rateLimit: false } }, async (request, reply) => {
      const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
      const sig = request.headers['x-signature-ed25519'];
      const ts = request.headers['x-signature-timestamp'];
      if (!verifySignature(key, typeof sig === 'string' ? sig : undefined, typeof ts === 'string' ? ts : undefined, raw)) {
        return send(reply, 401, { error: 'invalid request signature' });
      }
      const seconds = Number(ts);
      if (!Number.isFinite(seconds) || Math.abs(now() / 1000 - seconds) > MAX_SKEW_SECONDS) {
        return send(reply, 401, { error: 'stale request timestamp' });
      }
      let body: Json;
      try {
        body = JSON.parse(raw.toString('utf8')) as Json;
        if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('not an object');
      } catch {
        return send(reply, 400, { error: 'the body is not a JSON object' });
      }
      if (body.type === InteractionType.Ping) return send(reply, 200, { type: InteractionResponseType.Pong });

      const incoming = incomingFromJson(body);
      if (!incoming || typeof body.token !== 'string' || typeof body.application_id !== 'string') {
        return send(reply, 400, { error: 'not an interaction this bot handles' });
      }
      const responder = new HttpResponder(opts.rest, body.application_id, body.token);
      reply.raw.once('finish', () => responder.responseSent());
      reply.raw.once('close', () => responder.responseSent());
      const work = opts.router.deliver(incoming, responder).finally(() => inflight.delete(work));
      inflight.add(work);
      const answer = await Promise.race([responder.inline, work.then((outcome) => (outcome === DUPLICATE ? DUPLICATE : null))]);
      if (answer === DUPLICATE) return send(reply, 409, { error: 'this interaction is already being answered' });
      if (answer === null) {
        // The router finished without answering (it always answers; this guards a future bug).
        log.error({ ref: incoming.id }, 'interaction finished without an answer');
        return send(reply, 500, { error: 'no answer' });
      }
      return send(reply, 200, answer);
    });
  };
}
