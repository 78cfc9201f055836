/**
 * Game colour markup in names: `<c5>Just</c>Win`, `<cff00aa>pink</c>`. The game draws these as
 * colours, so we do too, and never print the tags. Anything that only looks like a tag (`<cool>`)
 * is part of the name and stays.
 */
import palette from './data/markup-colours.json' with { type: 'json' };

export interface TextRun {
  text: string;
  /** CSS colour, or undefined for the caller's base colour */
  color?: string;
}

const TAG = /<c([0-9]|[0-9a-fA-F]{6})>|<\/c[0-9]?>/g;

function colourOf(code: string): string | undefined {
  if (code.length === 6) return `#${code.toLowerCase()}`;
  return (palette as Record<string, string>)[code];
}

/** Splits a name into coloured runs; empty runs are dropped, nesting is a stack. */
export function parseMarkup(name: string): TextRun[] {
  const runs: TextRun[] = [];
  const stack: (string | undefined)[] = [];
  let last = 0;
  const push = (text: string) => {
    if (text === '') return;
    const color = stack.at(-1);
    const prev = runs.at(-1);
    if (prev && prev.color === color) prev.text += text;
    else runs.push(color === undefined ? { text } : { text, color });
  };
  for (const m of name.matchAll(TAG)) {
    push(name.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1] !== undefined) stack.push(colourOf(m[1]));
    else stack.pop();
  }
  push(name.slice(last));
  return runs;
}

/** The name as a player reads it, tags removed (for alt text, sorting, width checks). */
export function plainName(name: string): string {
  return parseMarkup(name)
    .map((r) => r.text)
    .join('');
}
