/**
 * Reply view → the message JSON Discord takes, plus the files to upload alongside it. One
 * rendering for every transport: the gateway hands it to discord.js, the HTTP endpoint to the REST
 * client, `starr try` prints it.
 */
import type {
  APIActionRowComponent,
  APIComponentInMessageActionRow,
  APIEmbed,
  APIMessageComponentEmoji,
} from 'discord-api-types/v10';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import type { ComponentStore } from './components.ts';
import { SOURCE } from '../i18n/index.ts';
import { fitView, type FitOptions } from './fit.ts';
import { format } from './format.ts';
import { MessageFlag } from './limits.ts';
import type { ReplyView, ViewComponent } from './view.ts';

export interface MessageBody {
  content: string;
  embeds: APIEmbed[];
  components: APIActionRowComponent<APIComponentInMessageActionRow>[];
  attachments: { id: number; filename: string; description?: string }[];
  flags?: number;
}

export interface RenderedFile {
  name: string;
  data: Buffer;
  contentType: string;
  description?: string;
}

export interface RenderedMessage {
  body: MessageBody;
  files: RenderedFile[];
  ephemeral: boolean;
}

const STYLE = {
  primary: ButtonStyle.Primary,
  secondary: ButtonStyle.Secondary,
  success: ButtonStyle.Success,
  danger: ButtonStyle.Danger,
} as const;

function emoji(e: string | undefined): APIMessageComponentEmoji | undefined {
  if (!e) return undefined;
  const custom = /^<(a?):(\w+):(\d+)>$/.exec(e);
  return custom ? { id: custom[3]!, name: custom[2]!, animated: custom[1] === 'a' } : { name: e };
}

function contentType(name: string): string {
  if (/\.png$/i.test(name)) return 'image/png';
  if (/\.jpe?g$/i.test(name)) return 'image/jpeg';
  if (/\.webp$/i.test(name)) return 'image/webp';
  if (/\.gif$/i.test(name)) return 'image/gif';
  if (/\.json$/i.test(name)) return 'application/json';
  return 'application/octet-stream';
}

async function component(c: ViewComponent, store: ComponentStore): Promise<APIComponentInMessageActionRow> {
  switch (c.type) {
    case 'link':
      return { type: ComponentType.Button, style: ButtonStyle.Link, label: c.label, url: c.url, emoji: emoji(c.emoji) };
    case 'button':
      return {
        type: ComponentType.Button,
        style: STYLE[c.style ?? 'secondary'],
        label: c.label,
        emoji: emoji(c.emoji),
        disabled: c.disabled,
        custom_id: await store.save([c.action]),
      };
    case 'select':
      return {
        type: ComponentType.StringSelect,
        custom_id: await store.save(c.options.map((o) => o.action)),
        placeholder: c.placeholder,
        disabled: c.disabled,
        options: c.options.map((o, i) => ({
          label: o.label,
          value: String(i),
          description: o.description,
          emoji: emoji(o.emoji),
          default: o.selected,
        })),
      };
  }
}

/** Drops keys whose value is undefined, so the JSON carries only what was set. */
function clean<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Fits the view to Discord's limits and renders it, storing component actions on the way. */
export async function renderView(view: ReplyView, store: ComponentStore, opts: FitOptions = {}): Promise<RenderedMessage> {
  const fitted = fitView(view, opts);
  const files = (fitted.files ?? []).map((f) => ({ name: f.name, data: f.data, contentType: contentType(f.name), description: f.description }));
  const components: MessageBody['components'] = [];
  const used = new Set<string>();
  for (const row of fitted.rows ?? []) {
    const items = await Promise.all(row.map((c) => component(c, store)));
    for (const item of items) {
      // Two components with the same action (a disabled "page 1" and "previous") need distinct ids.
      if (!('custom_id' in item) || !item.custom_id) continue;
      let id = item.custom_id;
      for (let k = 1; used.has(id); k++) id = `${item.custom_id}~${k}`;
      used.add(id);
      item.custom_id = id;
    }
    components.push({ type: ComponentType.ActionRow, components: items.map((x) => clean(x)) });
  }
  const empty = !fitted.content && !fitted.embeds?.length && !components.length && !files.length;
  const body: MessageBody = {
    // Discord refuses an empty message; a handler returning nothing still gets an answer.
    content: empty ? (opts.fmt ?? format(SOURCE)).t('reply.empty') : (fitted.content ?? ''),
    embeds: fitted.embeds ?? [],
    components,
    attachments: files.map((f, i) => clean({ id: i, filename: f.name, description: f.description })),
  };
  const ephemeral = fitted.ephemeral === true;
  if (ephemeral) body.flags = MessageFlag.Ephemeral;
  return { body, files, ephemeral };
}
