/**
 * Shapes a reply view to Discord's limits before it is sent, so Discord never rejects it: long
 * texts are cut with an ellipsis (in code points), extra fields, embeds, rows and options are left
 * out, and attachments over the channel's upload limit are dropped with a note. The limits
 * themselves live in limits.ts, shared with the fake Discord that enforces them in the tests.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { SOURCE } from '../i18n/index.ts';
import { format, type Format } from './format.ts';
import { LIMITS, codePoints, embedTotal } from './limits.ts';
import type { ReplyView, ViewComponent } from './view.ts';

/** Cuts `s` to at most `max` code points (after trimming), ending with `…` when cut. */
export function truncate(s: string, max: number): string {
  const t = s.trim();
  if (codePoints(t) <= max) return t;
  const cps = [...t];
  return `${cps.slice(0, Math.max(0, max - 1)).join('').trimEnd()}…`;
}

/** Field names and values may not be empty; a zero-width space is the conventional blank. */
const BLANK = '\u200b';

function fitEmbed(e: APIEmbed): APIEmbed {
  const L = LIMITS.embed;
  const out: APIEmbed = { ...e };
  if (out.title !== undefined) out.title = truncate(out.title, L.title);
  if (out.description !== undefined) {
    out.description = truncate(out.description, L.description);
    if (out.description === '') delete out.description;
  }
  if (out.author) out.author = { ...out.author, name: truncate(out.author.name, L.authorName) || BLANK };
  if (out.footer) out.footer = { ...out.footer, text: truncate(out.footer.text, L.footerText) || BLANK };
  if (out.fields) {
    out.fields = out.fields.slice(0, L.fields).map((f) => ({
      ...f,
      name: truncate(f.name, L.fieldName) || BLANK,
      value: truncate(f.value, L.fieldValue) || BLANK,
    }));
  }
  return out;
}

/** Brings the embeds of one message under the 6000 total: fields go first, from the end. */
function fitTotal(embeds: APIEmbed[]): APIEmbed[] {
  const out = embeds.map((e) => ({ ...e, fields: e.fields ? [...e.fields] : undefined }));
  const over = () => embedTotal(out) - LIMITS.embed.total;
  for (let i = out.length - 1; i >= 0 && over() > 0; i--) {
    const fields = out[i]!.fields;
    while (fields && fields.length > 0 && over() > 0) fields.pop();
  }
  for (let i = out.length - 1; i >= 0 && over() > 0; i--) {
    const e = out[i]!;
    if (e.description) e.description = truncate(e.description, Math.max(1, codePoints(e.description) - over()));
  }
  while (out.length > 1 && over() > 0) out.pop();
  for (const e of out) if (e.fields && e.fields.length === 0) delete e.fields;
  return out;
}

function fitRows(rows: ViewComponent[][]): ViewComponent[][] {
  // A select menu fills a row on its own; buttons share rows of at most five.
  const out: ViewComponent[][] = [];
  for (const row of rows) {
    let buttons: ViewComponent[] = [];
    for (const c of row) {
      if (c.type === 'select') {
        if (buttons.length) out.push(buttons);
        buttons = [];
        out.push([
          {
            ...c,
            placeholder: c.placeholder === undefined ? undefined : truncate(c.placeholder, LIMITS.selectPlaceholder),
            options: c.options.slice(0, LIMITS.selectOptions).map((o) => ({
              ...o,
              label: truncate(o.label, LIMITS.selectOption) || BLANK,
              description: o.description === undefined ? undefined : truncate(o.description, LIMITS.selectOption) || undefined,
            })),
          },
        ]);
        continue;
      }
      if (c.type === 'link' && c.url.length > LIMITS.linkUrl) continue;
      buttons.push({ ...c, label: truncate(c.label, LIMITS.buttonLabel) });
      if (buttons.length === LIMITS.buttonsPerRow) {
        out.push(buttons);
        buttons = [];
      }
    }
    if (buttons.length) out.push(buttons);
  }
  return out.filter((r) => r.length > 0 && !(r[0]!.type === 'select' && r[0]!.options.length === 0)).slice(0, LIMITS.actionRows);
}

/** A file size for people: KB under a megabyte (a 300 KB limit is not "0.3 MB"), else MB. */
export function fileSize(bytes: number, locale: string): string {
  const mb = bytes / (1024 * 1024);
  const [value, unit] = mb < 1 ? [bytes / 1024, 'kilobyte'] : [mb, 'megabyte'];
  return new Intl.NumberFormat(locale, { style: 'unit', unit, unitDisplay: 'short', maximumFractionDigits: value < 10 ? 1 : 0 }).format(value);
}

export interface FitOptions {
  /** the interaction's attachment_size_limit in bytes */
  attachmentSizeLimit?: number;
  /** the reader's words for the notes fitting adds (default English) */
  fmt?: Format;
}

/** Returns a view that respects every limit of limits.ts (the input is not changed). */
export function fitView(view: ReplyView, opts: FitOptions = {}): ReplyView {
  const limit = opts.attachmentSizeLimit ?? LIMITS.defaultAttachmentSize;
  const fmt = opts.fmt ?? format(SOURCE);
  const notes: string[] = [];
  const files = (view.files ?? []).filter((f) => {
    if (f.data.length <= limit) return true;
    notes.push(fmt.t('fit.fileTooBig', { file: f.name, size: fileSize(f.data.length, fmt.locale), limit: fileSize(limit, fmt.locale) }));
    return false;
  });
  const kept = new Set(files.slice(0, LIMITS.filesPerMessage).map((f) => f.name));
  const refOk = (url: string | undefined) => !url?.startsWith('attachment://') || kept.has(url.slice('attachment://'.length));

  let embeds = (view.embeds ?? []).slice(0, LIMITS.embedsPerMessage).map((e) => {
    const out = fitEmbed(e);
    if (out.image && !refOk(out.image.url)) delete out.image;
    if (out.thumbnail && !refOk(out.thumbnail.url)) delete out.thumbnail;
    return out;
  });
  embeds = fitTotal(embeds);

  const content = [view.content, ...notes].filter((s): s is string => !!s && s.trim() !== '').join('\n');
  const out: ReplyView = { ...view, embeds, files: files.filter((f) => kept.has(f.name)), rows: fitRows(view.rows ?? []) };
  if (content) out.content = truncate(content, LIMITS.content);
  else delete out.content;
  return out;
}
