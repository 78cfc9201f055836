/**
 * Discord's rules for what the bot sends (reference/discord-rules.md §1), in one place.
 *
 * The same functions serve two sides: the bot shapes every payload to fit before sending (fit.ts)
 * and checks the result, and the fake Discord in the tests rejects whatever breaks a rule with the
 * error Discord would give. They work on plain JSON (`unknown`), because the fake receives bytes
 * from discord.js and the bot builds raw API objects; neither side trusts the types.
 *
 * Lengths are counted in Unicode code points after trimming, as Discord's Python backend does;
 * JavaScript's `.length` would count an emoji twice.
 */

export const LIMITS = {
  content: 2000,
  embedsPerMessage: 10,
  embed: {
    title: 256,
    description: 4096,
    fields: 25,
    fieldName: 256,
    fieldValue: 1024,
    footerText: 2048,
    authorName: 256,
    /** across all embeds of one message: title, description, field names and values, footer, author */
    total: 6000,
  },
  actionRows: 5,
  buttonsPerRow: 5,
  customId: 100,
  buttonLabel: 80,
  linkUrl: 512,
  selectOptions: 25,
  selectPlaceholder: 150,
  selectOption: 100,
  filesPerMessage: 10,
  /** bytes per file when the interaction does not say (attachment_size_limit) */
  defaultAttachmentSize: 10 * 1024 * 1024,
  autocompleteChoices: 25,
  choiceName: 100,
  choiceValue: 100,
  command: {
    name: 32,
    description: 100,
    options: 25,
    choices: 25,
    stringLength: 6000,
    /** names, descriptions and choice values of the command and all its options */
    total: 8000,
    globalChatInput: 100,
  },
  /** the first response to an interaction must arrive within this */
  initialResponseMs: 3000,
  /** interaction tokens (edits, follow-ups) expire after this */
  tokenLifetimeMs: 15 * 60_000,
} as const;

export const MessageFlag = {
  SuppressEmbeds: 1 << 2,
  Ephemeral: 1 << 6,
  SuppressNotifications: 1 << 12,
  IsComponentsV2: 1 << 15,
} as const;

const ALLOWED_FLAGS = MessageFlag.SuppressEmbeds | MessageFlag.Ephemeral | MessageFlag.SuppressNotifications | MessageFlag.IsComponentsV2;

/** Image types an embed can show from an uploaded file through `attachment://`. */
const EMBED_IMAGE_EXTENSIONS = /\.(png|jpe?g|webp|gif)$/i;

/** Slash command and option names (the API applies the Unicode flag). */
const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

export type PathPart = string | number;

/** One broken rule, with Discord's error code and message and where it is in the body. */
export interface Problem {
  path: PathPart[];
  code: string;
  message: string;
}

/** Length as Discord counts it: code points of the trimmed string. */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s.trim()) n++;
  return n;
}

// ---------------------------------------------------------------- small readers over unknown JSON

type Json = Record<string, unknown>;

function isObj(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Checker {
  readonly problems: Problem[] = [];

  add(path: PathPart[], code: string, message: string): void {
    this.problems.push({ path, code, message });
  }

  /** A string of at most `max` code points (and at least `min`); absent is fine unless required. */
  str(obj: Json, key: string, path: PathPart[], max: number, opts: { min?: number; required?: boolean } = {}): string | undefined {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (opts.required) this.add([...path, key], 'BASE_TYPE_REQUIRED', 'This field is required');
      return undefined;
    }
    if (typeof v !== 'string') {
      this.add([...path, key], 'STRING_TYPE_CONVERT', 'Could not interpret value as string.');
      return undefined;
    }
    const n = codePoints(v);
    if (n > max) this.add([...path, key], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
    const min = opts.min ?? (opts.required ? 1 : 0);
    if (n < min) {
      if (n === 0 && opts.required) this.add([...path, key], 'BASE_TYPE_REQUIRED', 'This field is required');
      else this.add([...path, key], 'BASE_TYPE_MIN_LENGTH', `Must be ${min} or more in length.`);
    }
    return v;
  }

  arr(obj: Json, key: string, path: PathPart[], max: number, opts: { min?: number; required?: boolean } = {}): unknown[] {
    const v = obj[key];
    if (v === undefined || v === null) {
      if (opts.required) this.add([...path, key], 'BASE_TYPE_REQUIRED', 'This field is required');
      return [];
    }
    if (!Array.isArray(v)) {
      this.add([...path, key], 'LIST_TYPE_CONVERT', 'Must be an array.');
      return [];
    }
    if (v.length > max) this.add([...path, key], 'BASE_TYPE_MAX_LENGTH', `Must be ${max} or fewer in length.`);
    if (opts.min !== undefined && v.length < opts.min) {
      this.add([...path, key], 'BASE_TYPE_MIN_LENGTH', `Must be ${opts.min} or more in length.`);
    }
    return v;
  }

  int(obj: Json, key: string, path: PathPart[], min: number, max: number): number | undefined {
    const v = obj[key];
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'number' || !Number.isInteger(v)) {
      this.add([...path, key], 'NUMBER_TYPE_COERCE', `Value "${String(v)}" is not int.`);
      return undefined;
    }
    if (v < min) this.add([...path, key], 'NUMBER_TYPE_MIN', `int value should be greater than or equal to ${min}.`);
    if (v > max) this.add([...path, key], 'NUMBER_TYPE_MAX', `int value should be less than or equal to ${max}.`);
    return v;
  }
}

// ---------------------------------------------------------------- messages

export interface MessageCheckOptions {
  /** files that travel with the body as multipart parts `files[n]` */
  files?: { name: string; size: number }[];
  /** true for an edit: fields left out keep their old values, so an empty body is fine */
  edit?: boolean;
  /** only EPHEMERAL is allowed on a deferred (type 5) response */
  deferred?: boolean;
  /** file names the message already carries (an edit that leaves `attachments` out keeps them) */
  existingAttachments?: string[];
}

/** Sum of the counted embed texts of a message (the 6000 total). */
export function embedTotal(embeds: unknown[]): number {
  let total = 0;
  const count = (v: unknown) => {
    if (typeof v === 'string') total += codePoints(v);
  };
  for (const e of embeds) {
    if (!isObj(e)) continue;
    count(e.title);
    count(e.description);
    if (isObj(e.footer)) count(e.footer.text);
    if (isObj(e.author)) count(e.author.name);
    if (Array.isArray(e.fields)) {
      for (const f of e.fields) {
        if (!isObj(f)) continue;
        count(f.name);
        count(f.value);
      }
    }
  }
  return total;
}

function checkEmbed(c: Checker, e: unknown, path: PathPart[], attachmentNames: Set<string>): void {
  if (!isObj(e)) {
    c.add(path, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return;
  }
  const L = LIMITS.embed;
  c.str(e, 'title', path, L.title);
  c.str(e, 'description', path, L.description);
  c.str(e, 'url', path, 2048);
  c.int(e, 'color', path, 0, 0xffffff);
  if (e.timestamp !== undefined && (typeof e.timestamp !== 'string' || Number.isNaN(Date.parse(e.timestamp)))) {
    c.add([...path, 'timestamp'], 'DATE_TYPE_PARSE', 'Could not parse timestamp. Should be ISO8601.');
  }
  if (isObj(e.footer)) c.str(e.footer, 'text', [...path, 'footer'], L.footerText, { required: true });
  if (isObj(e.author)) c.str(e.author, 'name', [...path, 'author'], L.authorName, { required: true });
  for (const media of ['image', 'thumbnail'] as const) {
    const m = e[media];
    if (m === undefined) continue;
    if (!isObj(m) || typeof m.url !== 'string') {
      c.add([...path, media, 'url'], 'BASE_TYPE_REQUIRED', 'This field is required');
      continue;
    }
    checkMediaUrl(c, m.url, [...path, media, 'url'], attachmentNames);
  }
  const fields = c.arr(e, 'fields', path, L.fields);
  fields.forEach((f, i) => {
    const fp = [...path, 'fields', i];
    if (!isObj(f)) {
      c.add(fp, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    c.str(f, 'name', fp, L.fieldName, { required: true });
    c.str(f, 'value', fp, L.fieldValue, { required: true });
    if (f.inline !== undefined && typeof f.inline !== 'boolean') c.add([...fp, 'inline'], 'BASE_TYPE_BAD_TYPE', 'Must be a boolean.');
  });
}

function checkMediaUrl(c: Checker, url: string, path: PathPart[], attachmentNames: Set<string>): void {
  if (url.startsWith('attachment://')) {
    const name = url.slice('attachment://'.length);
    if (!EMBED_IMAGE_EXTENSIONS.test(name)) {
      c.add(path, 'URL_TYPE_INVALID_SCHEME', 'Attachment images must be png, jpg, jpeg, webp or gif.');
    }
    // An unmatched attachment:// reference is not an error for Discord, but the image never shows.
    if (!attachmentNames.has(name)) c.add(path, 'ATTACHMENT_NOT_FOUND', `No attachment named ${name} in this message.`);
    return;
  }
  if (!/^https?:\/\/\S+$/.test(url) || url.length > 2048) c.add(path, 'URL_TYPE_INVALID_URL', 'Not a well formed URL.');
}

function checkComponents(c: Checker, rows: unknown[], path: PathPart[]): void {
  const ids = new Set<string>();
  const customId = (obj: Json, p: PathPart[]) => {
    const id = c.str(obj, 'custom_id', p, LIMITS.customId, { required: true });
    if (id === undefined) return;
    if (ids.has(id)) c.add([...p, 'custom_id'], 'COMPONENT_CUSTOM_ID_DUPLICATED', 'Component custom id cannot be duplicated');
    ids.add(id);
  };
  rows.forEach((row, r) => {
    const rp = [...path, r];
    if (!isObj(row) || row.type !== 1) {
      c.add([...rp, 'type'], 'UNION_TYPE_CHOICES', 'Value of field "type" must be one of (1,).');
      return;
    }
    const items = c.arr(row, 'components', rp, LIMITS.buttonsPerRow, { min: 1, required: true });
    const selects = items.filter((x) => isObj(x) && typeof x.type === 'number' && x.type >= 3 && x.type <= 8 && x.type !== 4);
    if (selects.length > 0 && items.length > 1) {
      c.add([...rp, 'components'], 'COMPONENT_LAYOUT_WIDTH_EXCEEDED', 'The specified component exceeds the maximum width');
    }
    items.forEach((item, i) => {
      const ip = [...rp, 'components', i];
      if (!isObj(item)) {
        c.add(ip, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
        return;
      }
      if (item.type === 2) {
        const style = item.style;
        c.str(item, 'label', ip, LIMITS.buttonLabel);
        if (item.label === undefined && item.emoji === undefined) {
          c.add([...ip, 'label'], 'BUTTON_COMPONENT_INVALID', 'A button needs a label or an emoji');
        }
        if (style === 5) {
          c.str(item, 'url', ip, LIMITS.linkUrl, { required: true });
          if (item.custom_id !== undefined) c.add([...ip, 'custom_id'], 'BUTTON_COMPONENT_CUSTOM_ID_FORBIDDEN', 'A link button cannot have a custom id');
        } else if (style === 1 || style === 2 || style === 3 || style === 4) {
          customId(item, ip);
          if (item.url !== undefined) c.add([...ip, 'url'], 'BUTTON_COMPONENT_URL_FORBIDDEN', 'Only link buttons have a url');
        } else if (style !== 6) {
          c.add([...ip, 'style'], 'ENUM_TYPE_COERCE', `Value "${String(style)}" is not a valid enum value.`);
        }
      } else if (item.type === 3) {
        customId(item, ip);
        c.str(item, 'placeholder', ip, LIMITS.selectPlaceholder);
        const options = c.arr(item, 'options', ip, LIMITS.selectOptions, { min: 1, required: true });
        const min = c.int(item, 'min_values', ip, 0, LIMITS.selectOptions) ?? 1;
        const max = c.int(item, 'max_values', ip, 1, LIMITS.selectOptions) ?? 1;
        if (max < min) c.add([...ip, 'max_values'], 'SELECT_COMPONENT_MAX_VALUES_TOO_SMALL', 'max_values must be at least min_values');
        if (max > options.length && options.length > 0) {
          c.add([...ip, 'max_values'], 'SELECT_COMPONENT_MAX_VALUES_TOO_LARGE', 'max_values cannot exceed the number of options');
        }
        const values = new Set<string>();
        options.forEach((o, k) => {
          const op = [...ip, 'options', k];
          if (!isObj(o)) {
            c.add(op, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
            return;
          }
          c.str(o, 'label', op, LIMITS.selectOption, { required: true });
          const v = c.str(o, 'value', op, LIMITS.selectOption, { required: true });
          c.str(o, 'description', op, LIMITS.selectOption);
          if (v !== undefined) {
            if (values.has(v)) c.add([...op, 'value'], 'SELECT_COMPONENT_OPTION_VALUE_DUPLICATED', 'Select options must have unique values');
            values.add(v);
          }
        });
      } else if (typeof item.type === 'number' && item.type >= 5 && item.type <= 8) {
        customId(item, ip);
        c.str(item, 'placeholder', ip, LIMITS.selectPlaceholder);
      } else {
        c.add([...ip, 'type'], 'UNION_TYPE_CHOICES', 'Not a component allowed in an action row.');
      }
    });
  });
}

/**
 * Checks a message body (create, edit, follow-up, or the `data` of an interaction response).
 * Attachment sizes are not a form-body problem (Discord answers 413): see `oversizeFiles`.
 */
export function checkMessage(body: unknown, opts: MessageCheckOptions = {}): Problem[] {
  const c = new Checker();
  if (!isObj(body)) {
    c.add([], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return c.problems;
  }
  const files = opts.files ?? [];
  const flags = c.int(body, 'flags', [], 0, Number.MAX_SAFE_INTEGER) ?? 0;
  if ((flags & ~ALLOWED_FLAGS) !== 0) c.add(['flags'], 'MESSAGE_FLAGS_INVALID', 'Invalid message flags');
  if (opts.deferred && (flags & ~MessageFlag.Ephemeral) !== 0) {
    c.add(['flags'], 'INTERACTION_RESPONSE_FLAGS_INVALID', 'Only the ephemeral flag may be set on a deferred response');
  }
  const v2 = (flags & MessageFlag.IsComponentsV2) !== 0;
  c.str(body, 'content', [], LIMITS.content);
  const embeds = c.arr(body, 'embeds', [], LIMITS.embedsPerMessage);
  if (v2 && (embeds.length > 0 || (typeof body.content === 'string' && body.content !== ''))) {
    c.add(['flags'], 'MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2', 'content and embeds cannot be used with IS_COMPONENTS_V2');
  }

  // Names a file can be referenced by: new uploads, plus attachments kept from before.
  const attachmentNames = new Set(files.map((f) => f.name));
  if (body.attachments === undefined) for (const n of opts.existingAttachments ?? []) attachmentNames.add(n);
  const attachments = c.arr(body, 'attachments', [], LIMITS.filesPerMessage);
  for (const a of attachments) if (isObj(a) && typeof a.filename === 'string') attachmentNames.add(a.filename);
  if (files.length > LIMITS.filesPerMessage) {
    c.add(['files'], 'BASE_TYPE_MAX_LENGTH', `Must be ${LIMITS.filesPerMessage} or fewer in length.`);
  }

  embeds.forEach((e, i) => checkEmbed(c, e, ['embeds', i], attachmentNames));
  if (embedTotal(embeds) > LIMITS.embed.total) {
    c.add(['embeds'], 'MAX_EMBED_SIZE_EXCEEDED', `Embed size exceeds maximum size of ${LIMITS.embed.total}`);
  }
  if (!v2) {
    const rows = c.arr(body, 'components', [], LIMITS.actionRows);
    checkComponents(c, rows, ['components']);
  }

  const hasContent = typeof body.content === 'string' && body.content.trim() !== '';
  const hasComponents = Array.isArray(body.components) && body.components.length > 0;
  const hasAttachments = Array.isArray(body.attachments) && body.attachments.length > 0;
  if (!opts.edit && !opts.deferred && !hasContent && embeds.length === 0 && !hasComponents && files.length === 0 && !hasAttachments) {
    c.add([], 'MESSAGE_EMPTY', 'Cannot send an empty message');
  }
  return c.problems;
}

/** Files bigger than the interaction's attachment_size_limit (Discord answers 413 / 40005). */
export function oversizeFiles(files: { name: string; size: number }[], limit: number = LIMITS.defaultAttachmentSize): string[] {
  return files.filter((f) => f.size > limit).map((f) => f.name);
}

// ---------------------------------------------------------------- interaction responses

/** What each interaction type may be answered with (callback types). */
const ALLOWED_CALLBACKS: Record<number, number[]> = {
  1: [1],
  2: [4, 5, 9],
  3: [4, 5, 6, 7, 9],
  4: [8],
  5: [4, 5, 6, 7],
};

/** Checks an interaction callback body `{type, data}` for an interaction of `interactionType`. */
export function checkInteractionResponse(interactionType: number, body: unknown, files: { name: string; size: number }[] = []): Problem[] {
  const c = new Checker();
  if (!isObj(body) || typeof body.type !== 'number') {
    c.add(['type'], 'BASE_TYPE_REQUIRED', 'This field is required');
    return c.problems;
  }
  if (!(ALLOWED_CALLBACKS[interactionType] ?? []).includes(body.type)) {
    c.add(['type'], 'INTERACTION_RESPONSE_TYPE_INVALID', `Callback type ${body.type} is not valid for interaction type ${interactionType}`);
    return c.problems;
  }
  const data = body.data;
  switch (body.type) {
    case 4:
    case 7:
      return [...c.problems, ...prefix(['data'], checkMessage(data, { files, edit: body.type === 7 }))];
    case 5:
    case 6:
      return data === undefined || data === null ? c.problems : [...c.problems, ...prefix(['data'], checkMessage(data, { deferred: true, files }))];
    case 8:
      return [...c.problems, ...prefix(['data'], checkAutocompleteChoices(isObj(data) ? data.choices : undefined))];
    default:
      return c.problems;
  }
}

export function checkAutocompleteChoices(choices: unknown): Problem[] {
  const c = new Checker();
  const list = c.arr({ choices }, 'choices', [], LIMITS.autocompleteChoices, { required: true });
  list.forEach((ch, i) => {
    if (!isObj(ch)) {
      c.add(['choices', i], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    c.str(ch, 'name', ['choices', i], LIMITS.choiceName, { required: true });
    if (typeof ch.value === 'string') c.str(ch, 'value', ['choices', i], LIMITS.choiceValue);
    else if (typeof ch.value !== 'number') c.add(['choices', i, 'value'], 'BASE_TYPE_REQUIRED', 'This field is required');
  });
  return c.problems;
}

function prefix(p: PathPart[], problems: Problem[]): Problem[] {
  return problems.map((x) => ({ ...x, path: [...p, ...x.path] }));
}

// ---------------------------------------------------------------- command definitions

const OptionType = {
  Subcommand: 1,
  SubcommandGroup: 2,
  String: 3,
  Integer: 4,
  Boolean: 5,
  User: 6,
  Channel: 7,
  Role: 8,
  Mentionable: 9,
  Number: 10,
  Attachment: 11,
} as const;

const MAX_SAFE = 2 ** 53 - 1;

/** Field texts of an object with their localisations; only the longest counts toward the total. */
function longest(base: unknown, localisations: unknown): number {
  let n = typeof base === 'string' ? codePoints(base) : 0;
  if (isObj(localisations)) {
    for (const v of Object.values(localisations)) if (typeof v === 'string') n = Math.max(n, codePoints(v));
  }
  return n;
}

function checkName(c: Checker, obj: Json, path: PathPart[], lowercase: boolean): void {
  const check = (name: unknown, p: PathPart[]) => {
    if (typeof name !== 'string' || !COMMAND_NAME.test(name)) {
      c.add(p, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
    } else if (lowercase && [...name].some((ch) => ch !== ch.toLowerCase())) {
      c.add(p, 'APPLICATION_COMMAND_INVALID_NAME', 'Command name is invalid');
    }
  };
  check(obj.name, [...path, 'name']);
  if (isObj(obj.name_localizations)) {
    for (const [loc, v] of Object.entries(obj.name_localizations)) check(v, [...path, 'name_localizations', loc]);
  }
}

function checkDescription(c: Checker, obj: Json, path: PathPart[]): void {
  c.str(obj, 'description', path, LIMITS.command.description, { required: true });
  if (isObj(obj.description_localizations)) {
    for (const loc of Object.keys(obj.description_localizations)) {
      c.str(obj.description_localizations, loc, [...path, 'description_localizations'], LIMITS.command.description, { required: true });
    }
  }
}

/** Counted size of one option and everything inside it. */
function optionSize(o: Json): number {
  let n = longest(o.name, o.name_localizations) + longest(o.description, o.description_localizations);
  if (Array.isArray(o.choices)) {
    for (const ch of o.choices) {
      if (!isObj(ch)) continue;
      n += longest(ch.name, ch.name_localizations);
      n += typeof ch.value === 'string' ? codePoints(ch.value) : String(ch.value ?? '').length;
    }
  }
  if (Array.isArray(o.options)) for (const sub of o.options) if (isObj(sub)) n += optionSize(sub);
  return n;
}

/** The size Discord compares against its 8000-character command limit. */
export function commandSize(cmd: unknown): number {
  return isObj(cmd) ? optionSize(cmd) : 0;
}

function checkOptions(c: Checker, options: unknown[], path: PathPart[], level: 'command' | 'group' | 'subcommand'): void {
  const names = new Set<string>();
  let seenOptional = false;
  const kinds = new Set<'sub' | 'value'>();
  options.forEach((raw, i) => {
    const p = [...path, i];
    if (!isObj(raw)) {
      c.add(p, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
      return;
    }
    const type = raw.type;
    checkName(c, raw, p, true);
    checkDescription(c, raw, p);
    if (typeof raw.name === 'string') {
      if (names.has(raw.name)) c.add([...p, 'name'], 'APPLICATION_COMMAND_OPTION_NAME_ALREADY_EXISTS', 'Option names must be unique');
      names.add(raw.name);
    }
    if (typeof type !== 'number' || type < 1 || type > 11) {
      c.add([...p, 'type'], 'ENUM_TYPE_COERCE', `Value "${String(type)}" is not a valid enum value.`);
      return;
    }
    const isSub = type === OptionType.Subcommand || type === OptionType.SubcommandGroup;
    kinds.add(isSub ? 'sub' : 'value');
    if (isSub) {
      if (level === 'subcommand' || (level === 'group' && type === OptionType.SubcommandGroup)) {
        c.add([...p, 'type'], 'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID', 'Subcommands can only nest as command → group → subcommand');
      }
      if (level === 'group' && type !== OptionType.Subcommand) {
        c.add([...p, 'type'], 'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID', 'A subcommand group holds only subcommands');
      }
      if (raw.required === true) c.add([...p, 'required'], 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID', 'Subcommands cannot be required');
      const inner = c.arr(raw, 'options', p, LIMITS.command.options);
      checkOptions(c, inner, [...p, 'options'], type === OptionType.SubcommandGroup ? 'group' : 'subcommand');
      if (type === OptionType.SubcommandGroup && inner.length === 0) {
        c.add([...p, 'options'], 'BASE_TYPE_MIN_LENGTH', 'Must be 1 or more in length.');
      }
      return;
    }
    if (level === 'group') c.add([...p, 'type'], 'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID', 'A subcommand group holds only subcommands');
    if (raw.required === true) {
      if (seenOptional) {
        c.add([...p, 'required'], 'APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID', 'Required options must be placed before non-required options');
      }
    } else {
      seenOptional = true;
    }
    const choiceTypes: number[] = [OptionType.String, OptionType.Integer, OptionType.Number];
    const choices = c.arr(raw, 'choices', p, LIMITS.command.choices);
    if (choices.length > 0 && !choiceTypes.includes(type)) {
      c.add([...p, 'choices'], 'APPLICATION_COMMAND_OPTION_CHOICES_INVALID', 'Only string, integer and number options have choices');
    }
    if (raw.autocomplete === true) {
      if (!choiceTypes.includes(type)) c.add([...p, 'autocomplete'], 'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID', 'Autocomplete needs a string, integer or number option');
      if (choices.length > 0) c.add([...p, 'autocomplete'], 'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID_CHOICES', 'Autocomplete and choices cannot both be set');
    }
    choices.forEach((ch, k) => {
      const cp = [...p, 'choices', k];
      if (!isObj(ch)) {
        c.add(cp, 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
        return;
      }
      c.str(ch, 'name', cp, LIMITS.choiceName, { required: true });
      if (type === OptionType.String) c.str(ch, 'value', cp, LIMITS.choiceValue, { required: true });
      else if (typeof ch.value !== 'number' || (type === OptionType.Integer && !Number.isInteger(ch.value))) {
        c.add([...cp, 'value'], 'NUMBER_TYPE_COERCE', `Value "${String(ch.value)}" is not ${type === OptionType.Integer ? 'int' : 'a number'}.`);
      }
    });
    if (type === OptionType.String) {
      const min = c.int(raw, 'min_length', p, 0, LIMITS.command.stringLength);
      const max = c.int(raw, 'max_length', p, 1, LIMITS.command.stringLength);
      if (min !== undefined && max !== undefined && max < min) c.add([...p, 'max_length'], 'NUMBER_TYPE_MIN', 'max_length must be at least min_length');
    } else if (raw.min_length !== undefined || raw.max_length !== undefined) {
      c.add([...p, 'min_length'], 'APPLICATION_COMMAND_OPTION_LENGTH_INVALID', 'Only string options have lengths');
    }
    if (type === OptionType.Integer || type === OptionType.Number) {
      const bound = type === OptionType.Integer ? MAX_SAFE : 2 ** 53;
      for (const k of ['min_value', 'max_value'] as const) {
        const v = raw[k];
        if (v === undefined) continue;
        if (typeof v !== 'number' || (type === OptionType.Integer && !Number.isInteger(v)) || Math.abs(v) > bound) {
          c.add([...p, k], 'NUMBER_TYPE_MAX', `Must be between ${-bound} and ${bound}.`);
        }
      }
    }
  });
  if (kinds.size > 1) {
    c.add(path, 'APPLICATION_COMMAND_OPTIONS_TYPE_INVALID', 'Subcommands and groups cannot be mixed with other options');
  }
}

/** Checks one application command definition (chat input, user or message). */
export function checkCommand(cmd: unknown): Problem[] {
  const c = new Checker();
  if (!isObj(cmd)) {
    c.add([], 'MODEL_TYPE_CONVERT', 'Only dictionaries may be used in a ModelType');
    return c.problems;
  }
  const type = cmd.type ?? 1;
  if (type === 1) {
    checkName(c, cmd, [], true);
    checkDescription(c, cmd, []);
    checkOptions(c, c.arr(cmd, 'options', [], LIMITS.command.options), ['options'], 'command');
  } else {
    c.str(cmd, 'name', [], LIMITS.command.name, { required: true });
    if (cmd.description !== undefined && cmd.description !== '') {
      c.add(['description'], 'APPLICATION_COMMAND_DESCRIPTION_INVALID', 'User and message commands have an empty description');
    }
  }
  const perms = cmd.default_member_permissions;
  if (perms !== undefined && perms !== null && (typeof perms !== 'string' || !/^\d+$/.test(perms))) {
    c.add(['default_member_permissions'], 'BASE_TYPE_BAD_TYPE', 'Must be a permission bit set as a string.');
  }
  if (cmd.contexts !== undefined && cmd.contexts !== null) {
    const ctx = c.arr(cmd, 'contexts', [], 3);
    ctx.forEach((x, i) => {
      if (x !== 0 && x !== 1 && x !== 2) c.add(['contexts', i], 'ENUM_TYPE_COERCE', `Value "${String(x)}" is not a valid enum value.`);
    });
  }
  if (commandSize(cmd) > LIMITS.command.total) {
    c.add([], 'APPLICATION_COMMAND_TOO_LARGE', `Command exceeds maximum size (${LIMITS.command.total})`);
  }
  return c.problems;
}

/** Checks the body of a bulk overwrite: every command, unique names per type, the per-app caps. */
export function checkCommandSet(cmds: unknown): Problem[] {
  if (!Array.isArray(cmds)) return [{ path: [], code: 'LIST_TYPE_CONVERT', message: 'Must be an array.' }];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  let chatInput = 0;
  cmds.forEach((cmd, i) => {
    problems.push(...prefix([i], checkCommand(cmd)));
    if (!isObj(cmd)) return;
    const key = `${String(cmd.type ?? 1)}:${String(cmd.name)}`;
    if (seen.has(key)) problems.push({ path: [i, 'name'], code: 'APPLICATION_COMMANDS_DUPLICATE_NAME', message: `Application command names must be unique` });
    seen.add(key);
    if ((cmd.type ?? 1) === 1) chatInput++;
  });
  if (chatInput > LIMITS.command.globalChatInput) {
    problems.push({ path: [], code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${LIMITS.command.globalChatInput} or fewer in length.` });
  }
  return problems;
}

// ---------------------------------------------------------------- Discord's error body

/** Nests problems into Discord's `errors` object: `{embeds: {0: {title: {_errors: [...]}}}}`. */
export function errorsObject(problems: Problem[]): Json {
  const root: Json = {};
  for (const p of problems) {
    let node = root;
    for (const part of p.path) {
      const k = String(part);
      if (!isObj(node[k])) node[k] = {};
      node = node[k] as Json;
    }
    const list = (node._errors as { code: string; message: string }[] | undefined) ?? [];
    list.push({ code: p.code, message: p.message });
    node._errors = list;
  }
  return root;
}

/** One line per problem, `embeds[0].fields[3].value: Must be 1024 or fewer in length.` */
export function describeProblems(problems: Problem[]): string {
  return problems
    .map((p) => {
      const where = p.path.map((x, i) => (typeof x === 'number' ? `[${x}]` : i === 0 ? x : `.${x}`)).join('');
      return `${where || '(body)'}: ${p.message}`;
    })
    .join('\n');
}
