/**
 * Small pieces every embed builder uses: names as Discord text, paging buttons, colours.
 */
import { plainName } from '../../render/markup.ts';
import { nameColorToCss } from '../../upstream/schemas.ts';
import type { Format } from '../format.ts';
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
      label: 'Previous',
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
      label: 'Next',
      emoji: '▶️',
      disabled: page >= pages,
      action: { command, args: { ...args, page: Math.min(pages, page + 1) } },
    },
  ];
}

/** A command's views: what each is called in the menu and the `view` option. */
export type ViewTable = Record<string, { label: string; emoji: string; premium: boolean }>;

/** The "Choose a view" menu re-running `command` for `tag` with each view. */
export function viewMenu(command: string, tag: string, views: ViewTable, current: string): ViewComponent {
  return {
    type: 'select',
    placeholder: 'Choose a view',
    options: Object.entries(views).map(([v, d]) => ({
      label: d.label,
      emoji: d.emoji,
      selected: v === current,
      action: { command, args: { tag, view: v } },
    })),
  };
}

/** The `view` option's choices. */
export function viewChoices(views: ViewTable): { name: string; value: string }[] {
  return Object.entries(views).map(([value, d]) => ({ name: d.label, value }));
}

/** The credit line every data embed carries (the interface asks users to credit the service). */
export const CREDIT = 'Starr Stats · not affiliated with Supercell';
