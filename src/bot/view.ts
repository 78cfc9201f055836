/**
 * The reply view: what a command handler returns, independent of how it reaches Discord.
 *
 * The gateway client, the HTTP interactions endpoint and `starr try` all render this same value,
 * which is what makes every command testable without Discord. Components name an *action* (a
 * command to run again with some arguments) instead of a custom id: the renderer stores the action
 * under a short id (components.ts), so a button keeps working after a restart and on any process.
 */
import type { APIEmbed } from 'discord-api-types/v10';

export type Scalar = string | number | boolean;

/** Run `command` with `args`: a click re-runs the command and updates the message it is on. */
export interface ViewAction {
  command: string;
  args: Record<string, Scalar>;
}

export interface ViewButton {
  type: 'button';
  label: string;
  emoji?: string;
  style?: 'primary' | 'secondary' | 'success' | 'danger';
  disabled?: boolean;
  action: ViewAction;
}

export interface ViewLink {
  type: 'link';
  label: string;
  url: string;
  emoji?: string;
}

export interface ViewSelectOption {
  label: string;
  description?: string;
  emoji?: string;
  /** shown as the current choice */
  selected?: boolean;
  action: ViewAction;
}

export interface ViewSelect {
  type: 'select';
  placeholder?: string;
  disabled?: boolean;
  options: ViewSelectOption[];
}

export type ViewComponent = ViewButton | ViewLink | ViewSelect;

export interface ViewFile {
  name: string;
  data: Buffer;
  description?: string;
}

export interface ReplyView {
  content?: string;
  embeds?: APIEmbed[];
  files?: ViewFile[];
  /** action rows, top to bottom */
  rows?: ViewComponent[][];
  /** only the member who ran the command sees it */
  ephemeral?: boolean;
}

/** Brand colours of the bot's embeds. */
export const Colour = {
  brand: 0xffc400,
  info: 0x3b82f6,
  ok: 0x22c55e,
  warn: 0xf59e0b,
  error: 0xef4444,
  premium: 0xa855f7,
} as const;

/** A short ephemeral message in one embed: the shape of every error and confirmation. */
export function notice(title: string, description: string, colour: number = Colour.info): ReplyView {
  return { embeds: [{ title, description, color: colour }], ephemeral: true };
}
