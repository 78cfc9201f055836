/**
 * The bot's words for failures. Handlers throw typed errors (the core's upstream errors, tag
 * errors, or a UserError of their own); the router turns each into one short, human, ephemeral
 * answer here. Nothing else in the bot writes error text.
 */
import { InvalidTagError, explainTagProblem } from '../upstream/tags.ts';
import {
  AccessDeniedError,
  MaintenanceError,
  NotFoundError,
  ThrottledError,
  isUpstreamError,
} from '../upstream/errors.ts';
import type { Fetched } from '../core/types.ts';
import { StoreUnavailableError } from '../store/sql.ts';
import type { Format } from './format.ts';
import { Colour, notice, type ReplyView } from './view.ts';

/** A failure the member can act on, with the words to show them. */
export class UserError extends Error {
  constructor(
    readonly title: string,
    message: string,
    readonly colour: number = Colour.warn,
  ) {
    super(message);
    this.name = 'UserError';
  }
}

/** Runs a lookup and turns "not found" into a message naming what was looked for. */
export async function orNotFound<T>(what: 'player' | 'club', tag: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NotFoundError) {
      throw new UserError(
        `No ${what} ${tag}`,
        what === 'player'
          ? `The game knows no player with the tag **${tag}**. The tag is on the profile screen, under the player's name.`
          : `The game knows no club with the tag **${tag}**. The tag is on the club screen, under the club's name.`,
      );
    }
    throw e;
  }
}

/** The one answer for a failed command; `ref` is logged with the failure so support can find it. */
export function errorView(e: unknown, ref: string): ReplyView {
  if (e instanceof UserError) return notice(e.title, e.message, e.colour);
  if (e instanceof InvalidTagError) {
    return notice(
      'That is not a tag',
      `**${e.input.slice(0, 40) || '(empty)'}** is not a valid tag. ${explainTagProblem(e.problem)} Tags look like **#2PP0GQ9LU**.`,
      Colour.warn,
    );
  }
  if (e instanceof NotFoundError) return notice('Not found', 'The game has nothing under that name or tag.', Colour.warn);
  if (e instanceof MaintenanceError) {
    return notice(
      'The game is in maintenance',
      "The game's API is down for maintenance (usually 10 to 60 minutes) and there is no saved copy of this yet. Try again later.",
      Colour.warn,
    );
  }
  if (e instanceof ThrottledError) {
    return notice('Too many requests', "The game's API asked us to slow down. Try again in a minute.", Colour.warn);
  }
  if (e instanceof AccessDeniedError) {
    return notice('No access to the game', "The game's API refused this bot's token. The bot's operator needs to check it.", Colour.error);
  }
  if (e instanceof StoreUnavailableError) {
    return notice('History is unavailable', 'Our statistics database is not answering right now. Try again in a minute.', Colour.warn);
  }
  if (isUpstreamError(e)) {
    return notice('The game is not answering', "The game's API did not answer properly. Try again in a minute.", Colour.warn);
  }
  return notice('Something went wrong', `This command failed on our side. If it keeps happening, tell the bot's operator the reference \`${ref}\`.`, Colour.error);
}

/** A line saying the data is an old copy and why, or undefined when it is fresh. */
export function staleNote(f: Pick<Fetched<unknown>, 'stale' | 'fetchedAt' | 'staleReason'>, fmt: Format): string | undefined {
  if (!f.stale) return undefined;
  const why = f.staleReason === 'maintenance' ? "the game's API is in maintenance" : "the game's API is not answering";
  return `⚠️ Saved copy from ${fmt.relative(f.fetchedAt)}: ${why}.`;
}
