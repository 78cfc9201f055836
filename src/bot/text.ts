/**
 * A rendered reply as readable terminal text, for `starr try`: embeds with their fields,
 * components, attachments, and Discord's timestamp markup written out in the given locale.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import type { MessageBody, RenderedMessage } from './render.ts';

/** `<t:1700000000:R>` → "in 3 hours", `:f` → date and time, `:D` → date (UTC). */
export function resolveMarkup(s: string, locale: string, nowMs: number): string {
  const rel = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  const dateTime = new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' });
  const date = new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeZone: 'UTC' });
  return s
    .replace(/<t:(-?\d+)(?::([tTdDfFR]))?>/g, (_m, secs: string, style = 'f') => {
      const ms = Number(secs) * 1000;
      if (style === 'R') {
        const diff = (ms - nowMs) / 1000;
        const units: [Intl.RelativeTimeFormatUnit, number][] = [['day', 86_400], ['hour', 3600], ['minute', 60], ['second', 1]];
        const [unit, size] = units.find(([, n]) => Math.abs(diff) >= n) ?? ['second', 1];
        return rel.format(Math.round(diff / size), unit);
      }
      return style === 'D' || style === 'd' ? date.format(ms) : `${dateTime.format(ms)} UTC`;
    })
    .replace(/<@!?(\d+)>/g, '@$1')
    .replace(/<#(\d+)>/g, '#$1');
}

function indent(s: string, prefix: string): string {
  return s
    .split('\n')
    .map((l) => prefix + l)
    .join('\n');
}

function embedText(e: APIEmbed, fix: (s: string) => string, files: Map<string, string>): string {
  const out: string[] = [];
  if (e.author?.name) out.push(fix(e.author.name));
  if (e.title) out.push(`■ ${fix(e.title)}`);
  if (e.description) out.push(fix(e.description));
  for (const f of e.fields ?? []) {
    const value = fix(f.value);
    out.push(value.includes('\n') ? `▸ ${fix(f.name)}\n${indent(value, '  ')}` : `▸ ${fix(f.name)}: ${value}`);
  }
  for (const media of [e.image, e.thumbnail]) {
    if (!media?.url) continue;
    const name = media.url.replace(/^attachment:\/\//, '');
    out.push(`🖼  ${files.get(name) ?? media.url}`);
  }
  const foot = [e.footer?.text, e.timestamp ? new Date(e.timestamp).toISOString().replace('T', ' ').slice(0, 16) + ' UTC' : undefined].filter(Boolean);
  if (foot.length) out.push(`— ${fix(foot.join(' · '))}`);
  return indent(out.join('\n'), '│ ');
}

function componentsText(body: MessageBody): string[] {
  return body.components.map((row) =>
    row.components
      .map((c) => {
        if (c.type === 2) {
          const label = `${'emoji' in c && c.emoji?.name ? `${c.emoji.name} ` : ''}${'label' in c ? (c.label ?? '') : ''}`.trim();
          return c.disabled ? `(${label})` : `[${label}]`;
        }
        if (c.type === 3) {
          const chosen = c.options.find((o) => o.default);
          return `<${c.placeholder ?? 'choose'}${chosen ? `: ${chosen.label}` : ''} ▾ ${c.options.map((o) => o.label).join(' | ')}>`;
        }
        return `<component ${c.type}>`;
      })
      .join(' '),
  );
}

/** The whole reply; `files` maps attachment names to where they were written. */
export function messageText(msg: RenderedMessage, opts: { locale: string; nowMs: number; files?: Map<string, string> }): string {
  const fix = (s: string) => resolveMarkup(s, opts.locale, opts.nowMs);
  const files = opts.files ?? new Map<string, string>();
  const parts: string[] = [msg.ephemeral ? '(only you can see this)' : '(visible to the channel)'];
  if (msg.body.content) parts.push(fix(msg.body.content));
  for (const e of msg.body.embeds) parts.push(`┌${'─'.repeat(60)}\n${embedText(e, fix, files)}\n└${'─'.repeat(60)}`);
  const rows = componentsText(msg.body);
  if (rows.length) parts.push(`Components:\n${rows.map((r) => `  ${r}`).join('\n')}`);
  if (msg.files.length) {
    parts.push(
      `Attachments:\n${msg.files.map((f) => `  ${files.get(f.name) ?? f.name} (${Math.round(f.data.length / 1024)} KB)`).join('\n')}`,
    );
  }
  return parts.join('\n\n');
}
