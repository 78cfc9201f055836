/**
 * Reads a slash command typed as text — `/player tag:#2PP0GQ9LU view:brawlers`,
 * `/settings apikey set key:abc`, `/map name:Hard Rock Mine` — against the command definitions,
 * the way Discord's client would: subcommands by name, option values converted to their type and
 * checked against choices, bounds and required-ness. `starr try` runs commands from it; the fake
 * Discord builds interaction payloads from it.
 */
import type {
  APIApplicationCommandBasicOption,
  APIApplicationCommandInteractionDataBasicOption,
  APIApplicationCommandInteractionDataOption,
  APIApplicationCommandOption,
  RESTPostAPIChatInputApplicationCommandsJSONBody,
} from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';

export class InvocationError extends Error {
  override name = 'InvocationError';
}

export interface Invocation {
  command: RESTPostAPIChatInputApplicationCommandsJSONBody;
  /** the interaction's `data.options`, nested under subcommands as Discord sends them */
  options: APIApplicationCommandInteractionDataOption[];
}

/**
 * Splits `a b:c d e:"f g"` into words and `name:value` pairs. A value runs to the next ` name:`
 * unless it is quoted.
 */
function tokenize(text: string): { words: string[]; pairs: [string, string][] } {
  const words: string[] = [];
  const pairs: [string, string][] = [];
  const optionStart = /^([\p{L}\p{N}_'-]+):/u;
  const nextOption = /\s[\p{L}\p{N}_'-]+:/u;
  let i = 0;
  while (i < text.length) {
    while (i < text.length && /\s/.test(text[i]!)) i++;
    if (i >= text.length) break;
    const rest = text.slice(i);
    const m = optionStart.exec(rest);
    if (!m) {
      const word = /^\S+/.exec(rest)![0];
      words.push(word);
      i += word.length;
      continue;
    }
    let j = m[0].length;
    let value: string;
    const quote = rest[j];
    if ((quote === '"' || quote === "'") && rest.indexOf(quote, j + 1) > 0) {
      const close = rest.indexOf(quote, j + 1);
      value = rest.slice(j + 1, close);
      j = close + 1;
    } else {
      const next = nextOption.exec(rest.slice(j));
      const stop = next ? j + next.index : rest.length;
      value = rest.slice(j, stop).trim();
      j = stop;
    }
    pairs.push([m[1]!, value]);
    i += j;
  }
  return { words, pairs };
}

function convert(opt: APIApplicationCommandBasicOption, raw: string): string | number | boolean {
  const fail = (why: string) => new InvocationError(`Option ${opt.name}: ${why}`);
  let value: string | number | boolean;
  switch (opt.type) {
    case ApplicationCommandOptionType.String:
      value = raw;
      if (opt.min_length !== undefined && [...raw].length < opt.min_length) throw fail(`at least ${opt.min_length} characters`);
      if (opt.max_length !== undefined && [...raw].length > opt.max_length) throw fail(`at most ${opt.max_length} characters`);
      break;
    case ApplicationCommandOptionType.Integer:
    case ApplicationCommandOptionType.Number: {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n) || (opt.type === ApplicationCommandOptionType.Integer && !Number.isInteger(n))) {
        throw fail(`expected ${opt.type === ApplicationCommandOptionType.Integer ? 'a whole number' : 'a number'}, got ${JSON.stringify(raw)}`);
      }
      if (opt.min_value !== undefined && n < opt.min_value) throw fail(`at least ${opt.min_value}`);
      if (opt.max_value !== undefined && n > opt.max_value) throw fail(`at most ${opt.max_value}`);
      value = n;
      break;
    }
    case ApplicationCommandOptionType.Boolean:
      if (!/^(true|false)$/i.test(raw)) throw fail('expected true or false');
      value = raw.toLowerCase() === 'true';
      break;
    case ApplicationCommandOptionType.User:
    case ApplicationCommandOptionType.Channel:
    case ApplicationCommandOptionType.Role:
    case ApplicationCommandOptionType.Mentionable: {
      // Mentions <@123>, <#123>, <@&123> or a bare id.
      const id = /^<[@#]?[!&]?(\d{5,20})>$/.exec(raw)?.[1] ?? (/^\d{5,20}$/.test(raw) ? raw : undefined);
      if (!id) throw fail(`expected a mention or an id, got ${JSON.stringify(raw)}`);
      value = id;
      break;
    }
    default:
      throw fail('attachments cannot be given as text');
  }
  const choices = 'choices' in opt ? opt.choices : undefined;
  if (choices && choices.length > 0) {
    const hit = choices.find((c) => c.value === value || c.name.toLowerCase() === String(raw).toLowerCase());
    if (!hit) throw fail(`one of ${choices.map((c) => c.value).join(', ')}`);
    value = hit.value;
  }
  return value;
}

function basicOptions(
  defs: APIApplicationCommandBasicOption[],
  pairs: [string, string][],
  where: string,
  focus: string | undefined,
): APIApplicationCommandInteractionDataBasicOption[] {
  const out: APIApplicationCommandInteractionDataBasicOption[] = [];
  const given = new Map(pairs);
  for (const [name] of pairs) {
    if (!defs.some((d) => d.name === name)) {
      throw new InvocationError(`${where} has no option "${name}"${defs.length ? ` (options: ${defs.map((d) => d.name).join(', ')})` : ''}`);
    }
  }
  for (const d of defs) {
    const raw = given.get(d.name);
    if (d.name === focus) {
      // While typing, Discord sends the partial text of the focused option unconverted.
      out.push({ name: d.name, type: d.type, value: raw ?? '', focused: true } as APIApplicationCommandInteractionDataBasicOption);
      continue;
    }
    if (raw === undefined) {
      if (d.required && focus === undefined) throw new InvocationError(`${where} needs the option ${d.name}: ${d.description}`);
      continue;
    }
    out.push({ name: d.name, type: d.type, value: convert(d, raw) } as APIApplicationCommandInteractionDataBasicOption);
  }
  return out;
}

/**
 * Parses `/name [group] [sub] option:value ...` against the given definitions. With `focus`, the
 * result is an autocomplete request: that option carries the partial text and `focused: true`.
 */
export function parseInvocation(
  text: string,
  commands: RESTPostAPIChatInputApplicationCommandsJSONBody[],
  opts: { focus?: string } = {},
): Invocation {
  const trimmed = text.trim().replace(/^\//, '');
  const { words, pairs } = tokenize(trimmed);
  const [name, ...path] = words;
  if (!name) throw new InvocationError('Write a command, for example: /player tag:#2PP0GQ9LU');
  const command = commands.find((c) => c.name === name.toLowerCase());
  if (!command) throw new InvocationError(`Unknown command /${name}. Commands: ${commands.map((c) => `/${c.name}`).join(' ')}`);

  let level: APIApplicationCommandOption[] = command.options ?? [];
  const nest: { name: string; type: ApplicationCommandOptionType.Subcommand | ApplicationCommandOptionType.SubcommandGroup }[] = [];
  let where = `/${command.name}`;
  const isSubLevel = () => level.some((o) => o.type === ApplicationCommandOptionType.Subcommand || o.type === ApplicationCommandOptionType.SubcommandGroup);
  for (const word of path) {
    const sub = level.find((o) => o.name === word.toLowerCase());
    if (!sub || (sub.type !== ApplicationCommandOptionType.Subcommand && sub.type !== ApplicationCommandOptionType.SubcommandGroup)) {
      throw new InvocationError(`${where} has no subcommand "${word}"`);
    }
    nest.push({ name: sub.name, type: sub.type });
    where += ` ${sub.name}`;
    level = sub.options ?? [];
  }
  if (isSubLevel()) {
    throw new InvocationError(`${where} needs a subcommand: ${level.map((o) => o.name).join(', ')}`);
  }
  if (opts.focus !== undefined && !level.some((o) => o.name === opts.focus && 'autocomplete' in o && o.autocomplete)) {
    throw new InvocationError(`${where} has no autocompleted option "${opts.focus}"`);
  }
  let options: APIApplicationCommandInteractionDataOption[] = basicOptions(level as APIApplicationCommandBasicOption[], pairs, where, opts.focus);
  for (let i = nest.length - 1; i >= 0; i--) {
    const n = nest[i]!;
    options = [{ name: n.name, type: n.type, options } as APIApplicationCommandInteractionDataOption];
  }
  return { command, options };
}
