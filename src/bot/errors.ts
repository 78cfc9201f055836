/**
 * The bot's words for failures. Handlers throw typed errors (the core's upstream errors, tag
 * errors, or a UserError of their own); the router turns each into one short, human, ephemeral
 * answer here. Nothing else in the bot writes error text.
 */
import { InvalidTagError, TAG_ALPHABET, TAG_MAX_LENGTH, TAG_MIN_LENGTH } from '../upstream/tags.ts';
import type { MessageValues } from '../i18n/index.ts';
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

/**
 * A failure the member can act on. `key` names two messages of the catalogue, `<key>.title` and
 * `<key>.body`, translated into the reader's language when the router shows it.
 */
export class UserError extends Error {
  constructor(
    readonly key: string,
    readonly values: MessageValues = {},
    readonly colour: number = Colour.warn,
  ) {
    super(key);
    this.name = 'UserError';
  }
}

/** Runs a lookup and turns "not found" into a message naming what was looked for. */
export async function orNotFound<T>(what: 'player' | 'club', tag: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof NotFoundError) throw new UserError(what === 'player' ? 'error.noPlayer' : 'error.noClub', { tag });
    throw e;
  }
}

/** The one answer for a failed command; `ref` is logged with the failure so support can find it. */
export function errorView(e: unknown, ref: string, fmt: Format): ReplyView {
  const say = (key: string, colour: number, values: MessageValues = {}) =>
    notice(fmt.t(`${key}.title`, values), fmt.t(`${key}.body`, values), colour);
  if (e instanceof UserError) return say(e.key, e.colour, e.values);
  if (e instanceof InvalidTagError) {
    return notice(
      fmt.t('error.badTag.title'),
      fmt.t('error.badTag.body', {
        input: e.input.slice(0, 40) || fmt.t('error.badTag.empty'),
        problem: fmt.t(`tag.problem.${e.problem}`, { min: TAG_MIN_LENGTH, max: TAG_MAX_LENGTH, alphabet: TAG_ALPHABET.split('').join(' ') }),
      }),
      Colour.warn,
    );
  }
  if (e instanceof NotFoundError) return say('error.notFound', Colour.warn);
  if (e instanceof MaintenanceError) return say('error.maintenance', Colour.warn);
  if (e instanceof ThrottledError) return say('error.throttled', Colour.warn);
  if (e instanceof AccessDeniedError) return say('error.accessDenied', Colour.error);
  if (e instanceof StoreUnavailableError) return say('error.storeDown', Colour.warn);
  if (isUpstreamError(e)) return say('error.upstream', Colour.warn);
  return say('error.internal', Colour.error, { ref });
}

/** A line saying the data is an old copy and why, or undefined when it is fresh. */
export function staleNote(f: Pick<Fetched<unknown>, 'stale' | 'fetchedAt' | 'staleReason'>, fmt: Format): string | undefined {
  if (!f.stale) return undefined;
  return fmt.t(f.staleReason === 'maintenance' ? 'stale.maintenance' : 'stale.down', { when: fmt.relative(f.fetchedAt) });
}
