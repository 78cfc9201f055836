/**
 * Small pieces every embed builder uses: names as Discord text, paging buttons, colours.
 */
import { plainName } from '../../render/markup.ts';
import { nameColorToCss } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
import { choice } from '../localize.ts';
import type { Scalar, ViewComponent } from '../view.ts';

/** Characters that Discord markdown would interpret. */
const MARKDOWN = /([\\*_~`|>#[\]()-])/g;

export function escapeMarkdown(s: string): string {
  return s.replace(MARKDOWN, '\\$1');
}

/** A player's or club's name as plain Discord text: colour markup dropped, markdown escaped. */
export function gameName(name: string): string {
  const plain = plainName(name).replace(/\s+/g, ' ').trim();
  return escapeMarkdown(plain || '(no name)');
}

/** Game name colour `0xffRRGGBB` as an embed colour, when it has one. */
export function nameColour(c: string | undefined): number | undefined {
  const css = nameColorToCss(c);
  return css ? Number.parseInt(css.slice(1), 16) : undefined;
}

/** How many pages `count` items make at `size` per page (at least one). */
export function pageCount(count: number, size: number): number {
  return Math.max(1, Math.ceil(count / size));
}

/** Keeps a page number inside 1..pages. */
export function clampPage(page: number | undefined, pages: number): number {
  return Math.min(Math.max(1, Math.trunc(page ?? 1)), pages);
}

/** ◀ page x/y ▶ buttons re-running `command` with `args` and another page. */
export function pager(command: string, args: Record<string, Scalar>, page: number, pages: number, fmt: Format): ViewComponent[] {
  if (pages <= 1) return [];
  return [
    {
      type: 'button',
      label: fmt.t('pager.previous'),
      emoji: '◀️',
      disabled: page <= 1,
      action: { command, args: { ...args, page: Math.max(1, page - 1) } },
    },
    {
      type: 'button',
      label: `${fmt.int(page)} / ${fmt.int(pages)}`,
      disabled: true,
      action: { command, args: { ...args, page } },
    },
    {
      type: 'button',
      label: fmt.t('pager.next'),
      emoji: '▶️',
      disabled: page >= pages,
      action: { command, args: { ...args, page: Math.min(pages, page + 1) } },
    },
  ];
}

/**
 * A command's views; each is called `view.<command>.<view>` in the catalogue, in the menu and in
 * the `view` option alike.
 */
export type ViewTable = Record<string, { emoji: string; premium: boolean }>;

/** The catalogue key of a view's name. */
export const viewKey = (command: string, view: string) => `view.${command}.${view}`;

/** The "Choose a view" menu re-running `command` for `tag` with each view. */
export function viewMenu(command: string, tag: string, views: ViewTable, current: string, fmt: Format): ViewComponent {
  return {
    type: 'select',
    placeholder: fmt.t('menu.chooseView'),
    options: Object.entries(views).map(([v, d]) => ({
      label: fmt.t(viewKey(command, v)),
      emoji: d.emoji,
      selected: v === current,
      action: { command, args: { tag, view: v } },
    })),
  };
}

/** The `view` option's choices, named in every language. */
export function viewChoices(command: string, views: ViewTable) {
  return Object.keys(views).map((value) => choice(viewKey(command, value), value));
}

/** The credit line every data embed carries (the interface asks users to credit the service). */
export function credit(fmt: Format): string {
  return fmt.t('credit');
}

/** The footer of a data embed: the credit, and the time the data was fetched. */
export function dataFooter(fmt: Format, fetchedAt?: number): { footer: { text: string }; timestamp?: string } {
  return { footer: { text: credit(fmt) }, ...(fetchedAt ? { timestamp: new Date(fetchedAt).toISOString() } : {}) };
}
