import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  LIMITS,
  checkAutocompleteChoices,
  checkCommand,
  checkCommandSet,
  checkInteractionResponse,
  checkMessage,
  codePoints,
  commandSize,
  describeProblems,
  embedTotal,
  errorsObject,
  oversizeFiles,
} from '../src/bot/limits.ts';
import { fitView, truncate } from '../src/bot/fit.ts';
import { ComponentStore } from '../src/bot/components.ts';
import { renderView } from '../src/bot/render.ts';
import type { ReplyView, ViewComponent } from '../src/bot/view.ts';
import Keyv from 'keyv';

const codes = (p: { code: string }[]) => p.map((x) => x.code);

describe('Discord limits: messages', () => {
  it('counts code points after trimming, so an emoji is one character', () => {
    expect(codePoints('  ab  ')).toBe(2);
    expect(codePoints('🏆'.repeat(10))).toBe(10);
    expect('🏆'.repeat(10).length).toBe(20);
  });

  it('accepts every embed field at its exact limit and rejects one more', () => {
    const at = {
      title: 'a'.repeat(256),
      description: 'b'.repeat(4096),
      footer: { text: 'c'.repeat(100) },
      author: { name: 'd'.repeat(256) },
      fields: [{ name: 'e'.repeat(256), value: 'f'.repeat(1024) }],
    };
    expect(embedTotal([at])).toBe(256 + 4096 + 100 + 256 + 256 + 1024);
    expect(checkMessage({ embeds: [at] })).toEqual([]);
    for (const [path, over] of [
      [['embeds', 0, 'title'], { ...at, title: 'a'.repeat(257) }],
      [['embeds', 0, 'description'], { ...at, description: 'b'.repeat(4097) }],
      [['embeds', 0, 'author', 'name'], { ...at, author: { name: 'd'.repeat(257) } }],
      [['embeds', 0, 'fields', 0, 'value'], { ...at, fields: [{ name: 'x', value: 'f'.repeat(1025) }] }],
      [['embeds', 0, 'fields', 0, 'name'], { ...at, fields: [{ name: 'e'.repeat(257), value: 'x' }] }],
    ] as const) {
      const problems = checkMessage({ embeds: [over] });
      expect(problems.map((p) => p.path)).toContainEqual(path);
      expect(codes(problems)).toContain('BASE_TYPE_MAX_LENGTH');
    }
  });

  it('measures emoji in code points: 256 trophies fit a title that JavaScript counts as 512', () => {
    expect(checkMessage({ embeds: [{ title: '🏆'.repeat(256) }] })).toEqual([]);
    expect(codes(checkMessage({ embeds: [{ title: '🏆'.repeat(257) }] }))).toEqual(['BASE_TYPE_MAX_LENGTH']);
  });

  it('rejects the 6000 total across embeds that the builders let through', () => {
    const two = [{ description: 'x'.repeat(4096) }, { description: 'y'.repeat(4096) }];
    const problems = checkMessage({ embeds: two });
    expect(codes(problems)).toEqual(['MAX_EMBED_SIZE_EXCEEDED']);
  });

  it('rejects empty field names and values, more than 25 fields, more than 10 embeds', () => {
    expect(codes(checkMessage({ embeds: [{ fields: [{ name: ' ', value: 'x' }] }] }))).toContain('BASE_TYPE_REQUIRED');
    expect(codes(checkMessage({ embeds: [{ fields: [{ name: 'x', value: '' }] }] }))).toContain('BASE_TYPE_REQUIRED');
    const fields = Array.from({ length: 26 }, (_, i) => ({ name: `f${i}`, value: 'v' }));
    expect(codes(checkMessage({ embeds: [{ fields }] }))).toContain('BASE_TYPE_MAX_LENGTH');
    expect(codes(checkMessage({ embeds: Array.from({ length: 11 }, () => ({ title: 't' })) }))).toContain('BASE_TYPE_MAX_LENGTH');
  });

  it('checks content length, empty messages and flags', () => {
    expect(codes(checkMessage({ content: 'x'.repeat(2001) }))).toEqual(['BASE_TYPE_MAX_LENGTH']);
    expect(codes(checkMessage({}))).toEqual(['MESSAGE_EMPTY']);
    expect(checkMessage({}, { edit: true })).toEqual([]);
    expect(codes(checkMessage({ content: 'x', flags: 1 << 3 }))).toEqual(['MESSAGE_FLAGS_INVALID']);
    expect(codes(checkMessage({ flags: 4 }, { deferred: true }))).toEqual(['INTERACTION_RESPONSE_FLAGS_INVALID']);
    expect(codes(checkMessage({ content: 'x', flags: 1 << 15 }))).toEqual(['MESSAGE_CANNOT_USE_LEGACY_FIELDS_WITH_COMPONENTS_V2']);
  });

  it('checks attachment references, image types and the files count', () => {
    const files = [{ name: 'chart.png', size: 10 }];
    expect(checkMessage({ embeds: [{ image: { url: 'attachment://chart.png' } }] }, { files })).toEqual([]);
    expect(codes(checkMessage({ embeds: [{ image: { url: 'attachment://other.png' } }] }, { files }))).toEqual(['ATTACHMENT_NOT_FOUND']);
    expect(codes(checkMessage({ embeds: [{ image: { url: 'attachment://data.json' } }] }, { files: [{ name: 'data.json', size: 1 }] }))).toEqual([
      'URL_TYPE_INVALID_SCHEME',
    ]);
    // An edit that leaves `attachments` out keeps the old files, so the reference still holds.
    expect(checkMessage({ embeds: [{ image: { url: 'attachment://old.png' } }] }, { edit: true, existingAttachments: ['old.png'] })).toEqual([]);
    const eleven = Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.png`, size: 1 }));
    expect(codes(checkMessage({ content: 'x' }, { files: eleven }))).toContain('BASE_TYPE_MAX_LENGTH');
  });

  it('lists files over attachment_size_limit (Discord answers 413 for those)', () => {
    expect(oversizeFiles([{ name: 'a.png', size: 100 }, { name: 'b.png', size: 101 }], 100)).toEqual(['b.png']);
    expect(oversizeFiles([{ name: 'a.png', size: LIMITS.defaultAttachmentSize + 1 }])).toEqual(['a.png']);
  });
});

describe('Discord limits: components', () => {
  const button = (id: string, label = 'x') => ({ type: 2, style: 1, label, custom_id: id });
  const row = (...components: unknown[]) => ({ type: 1, components });

  it('allows 5 rows of 5 buttons and no more', () => {
    const rows = Array.from({ length: 5 }, (_, r) => row(...Array.from({ length: 5 }, (_, b) => button(`${r}-${b}`))));
    expect(checkMessage({ components: rows })).toEqual([]);
    expect(codes(checkMessage({ components: [...rows, row(button('z'))] }))).toContain('BASE_TYPE_MAX_LENGTH');
    expect(codes(checkMessage({ components: [row(...Array.from({ length: 6 }, (_, b) => button(`b${b}`)))] }))).toContain('BASE_TYPE_MAX_LENGTH');
  });

  it('rejects duplicate and over-long custom ids, long labels, and a select sharing a row', () => {
    expect(codes(checkMessage({ components: [row(button('a'), button('a'))] }))).toEqual(['COMPONENT_CUSTOM_ID_DUPLICATED']);
    expect(codes(checkMessage({ components: [row(button('a'.repeat(101)))] }))).toEqual(['BASE_TYPE_MAX_LENGTH']);
    expect(codes(checkMessage({ components: [row(button('a', 'l'.repeat(81)))] }))).toEqual(['BASE_TYPE_MAX_LENGTH']);
    const select = { type: 3, custom_id: 's', options: [{ label: 'a', value: 'a' }] };
    expect(codes(checkMessage({ components: [row(select, button('b'))] }))).toContain('COMPONENT_LAYOUT_WIDTH_EXCEEDED');
  });

  it('checks select menus: 25 options, unique values, lengths, min/max values', () => {
    const opts = (n: number) => Array.from({ length: n }, (_, i) => ({ label: `o${i}`, value: `v${i}` }));
    expect(checkMessage({ components: [row({ type: 3, custom_id: 's', options: opts(25) })] })).toEqual([]);
    expect(codes(checkMessage({ components: [row({ type: 3, custom_id: 's', options: opts(26) })] }))).toContain('BASE_TYPE_MAX_LENGTH');
    expect(codes(checkMessage({ components: [row({ type: 3, custom_id: 's', options: [{ label: 'a', value: 'v' }, { label: 'b', value: 'v' }] })] }))).toContain(
      'SELECT_COMPONENT_OPTION_VALUE_DUPLICATED',
    );
    expect(codes(checkMessage({ components: [row({ type: 3, custom_id: 's', placeholder: 'p'.repeat(151), options: opts(1) })] }))).toContain(
      'BASE_TYPE_MAX_LENGTH',
    );
    expect(codes(checkMessage({ components: [row({ type: 3, custom_id: 's', max_values: 3, options: opts(2) })] }))).toContain(
      'SELECT_COMPONENT_MAX_VALUES_TOO_LARGE',
    );
  });

  it('knows link buttons have a url and no custom id', () => {
    expect(checkMessage({ components: [row({ type: 2, style: 5, label: 'x', url: 'https://example.org' })] })).toEqual([]);
    expect(codes(checkMessage({ components: [row({ type: 2, style: 5, label: 'x', url: 'https://e.org', custom_id: 'a' })] }))).toContain(
      'BUTTON_COMPONENT_CUSTOM_ID_FORBIDDEN',
    );
  });
});

describe('Discord limits: interaction responses and autocomplete', () => {
  it('allows only the callback types of each interaction type', () => {
    expect(checkInteractionResponse(2, { type: 5 })).toEqual([]);
    expect(checkInteractionResponse(2, { type: 4, data: { content: 'hi' } })).toEqual([]);
    expect(codes(checkInteractionResponse(2, { type: 7, data: { content: 'hi' } }))).toEqual(['INTERACTION_RESPONSE_TYPE_INVALID']);
    expect(codes(checkInteractionResponse(2, { type: 6 }))).toEqual(['INTERACTION_RESPONSE_TYPE_INVALID']);
    expect(checkInteractionResponse(3, { type: 6 })).toEqual([]);
    expect(codes(checkInteractionResponse(4, { type: 4, data: { content: 'x' } }))).toEqual(['INTERACTION_RESPONSE_TYPE_INVALID']);
    expect(checkInteractionResponse(1, { type: 1 })).toEqual([]);
  });

  it('caps autocomplete at 25 choices of 100 characters', () => {
    const choices = (n: number, name = 'n') => Array.from({ length: n }, (_, i) => ({ name: `${name}${i}`, value: `v${i}` }));
    expect(checkAutocompleteChoices(choices(25))).toEqual([]);
    expect(codes(checkAutocompleteChoices(choices(26)))).toEqual(['BASE_TYPE_MAX_LENGTH']);
    expect(codes(checkAutocompleteChoices(choices(1, 'x'.repeat(100))))).toEqual(['BASE_TYPE_MAX_LENGTH']);
    expect(codes(checkInteractionResponse(4, { type: 8, data: { choices: choices(26) } }))).toEqual(['BASE_TYPE_MAX_LENGTH']);
  });
});

describe('Discord limits: command definitions (including what the builders miss)', () => {
  const opt = (name: string, required = false, type = 3) => ({ type, name, description: `${name} option`, required });

  it('accepts a well-formed command', () => {
    expect(checkCommand({ name: 'player', description: 'A player', options: [opt('tag', true), opt('view')] })).toEqual([]);
  });

  it('rejects required options after optional ones', () => {
    const p = checkCommand({ name: 'x', description: 'x', options: [opt('a'), opt('b', true)] });
    expect(codes(p)).toEqual(['APPLICATION_COMMAND_OPTIONS_REQUIRED_INVALID']);
    expect(p[0]!.path).toEqual(['options', 1, 'required']);
  });

  it('rejects duplicate option names and duplicate command names', () => {
    expect(codes(checkCommand({ name: 'x', description: 'x', options: [opt('a'), opt('a')] }))).toEqual(['APPLICATION_COMMAND_OPTION_NAME_ALREADY_EXISTS']);
    expect(codes(checkCommandSet([{ name: 'x', description: 'x' }, { name: 'x', description: 'y' }]))).toEqual(['APPLICATION_COMMANDS_DUPLICATE_NAME']);
  });

  it('rejects a command over 8000 characters counting the longest localisation', () => {
    const choices = (n: number) => Array.from({ length: 25 }, (_, i) => ({ name: `${n}-${i}`.padEnd(100, 'c'), value: `${n}-${i}`.padEnd(100, 'v') }));
    const big = { name: 'big', description: 'd', options: [1, 2].map((n) => ({ ...opt(`o${n}`), choices: choices(n) })) };
    expect(commandSize(big)).toBeGreaterThan(8000);
    expect(codes(checkCommand(big))).toEqual(['APPLICATION_COMMAND_TOO_LARGE']);
    const small = { name: 'small', description: 'd', options: [{ ...opt('o'), choices: choices(1) }] };
    expect(checkCommand(small)).toEqual([]);
    const localised = { ...small, description_localizations: { de: 'x'.repeat(100) } };
    expect(commandSize(localised)).toBe(commandSize(small) - 1 + 100);
  });

  it('checks names (lowercase, the Unicode pattern, apostrophes allowed) and descriptions', () => {
    expect(codes(checkCommand({ name: 'Player', description: 'x' }))).toEqual(['APPLICATION_COMMAND_INVALID_NAME']);
    expect(codes(checkCommand({ name: 'two words', description: 'x' }))).toEqual(['APPLICATION_COMMAND_INVALID_NAME']);
    expect(checkCommand({ name: "don't", description: 'x' })).toEqual([]);
    expect(checkCommand({ name: 'спорт', description: 'x' })).toEqual([]);
    expect(codes(checkCommand({ name: 'x', description: '' }))).toEqual(['BASE_TYPE_REQUIRED']);
    expect(codes(checkCommand({ name: 'x', description: 'd'.repeat(101) }))).toEqual(['BASE_TYPE_MAX_LENGTH']);
  });

  it('checks nesting, choices with autocomplete, and string lengths', () => {
    const sub = (name: string, options: unknown[] = []) => ({ type: 1, name, description: name, options });
    expect(checkCommand({ name: 'x', description: 'x', options: [{ type: 2, name: 'g', description: 'g', options: [sub('s')] }] })).toEqual([]);
    expect(codes(checkCommand({ name: 'x', description: 'x', options: [sub('s', [sub('t')])] }))).toContain('APPLICATION_COMMAND_OPTIONS_TYPE_INVALID');
    expect(codes(checkCommand({ name: 'x', description: 'x', options: [sub('s'), opt('a')] }))).toContain('APPLICATION_COMMAND_OPTIONS_TYPE_INVALID');
    expect(codes(checkCommand({ name: 'x', description: 'x', options: [{ ...opt('a'), autocomplete: true, choices: [{ name: 'a', value: 'a' }] }] }))).toContain(
      'APPLICATION_COMMAND_AUTOCOMPLETE_INVALID_CHOICES',
    );
    expect(codes(checkCommand({ name: 'x', description: 'x', options: [{ ...opt('a'), max_length: 6001 }] }))).toContain('NUMBER_TYPE_MAX');
    expect(codes(checkCommand({ name: 'x', description: 'x', options: Array.from({ length: 26 }, (_, i) => opt(`o${i}`)) }))).toContain(
      'BASE_TYPE_MAX_LENGTH',
    );
  });

  it("nests problems into Discord's errors object and describes them in lines", () => {
    const problems = checkMessage({ embeds: [{ title: 'x'.repeat(300) }] });
    expect(errorsObject(problems)).toEqual({
      embeds: { '0': { title: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH', message: 'Must be 256 or fewer in length.' }] } } },
    });
    expect(describeProblems(problems)).toBe('embeds[0].title: Must be 256 or fewer in length.');
  });
});

describe('shape-to-fit', () => {
  it('truncates in code points with an ellipsis', () => {
    expect(truncate('🏆'.repeat(300), 256)).toBe(`${'🏆'.repeat(255)}…`);
    expect(codePoints(truncate('x'.repeat(5000), 4096))).toBe(4096);
    expect(truncate('short', 10)).toBe('short');
  });

  it('drops files over the upload limit and the image that pointed at them, with a note', () => {
    const view: ReplyView = {
      embeds: [{ title: 't', image: { url: 'attachment://big.png' } }],
      files: [{ name: 'big.png', data: Buffer.alloc(2000) }],
    };
    const fitted = fitView(view, { attachmentSizeLimit: 1000 });
    expect(fitted.files).toEqual([]);
    expect(fitted.embeds![0]!.image).toBeUndefined();
    expect(fitted.content).toContain('big.png was left out');
  });

  const text = fc.string({ unit: fc.constantFrom('a', 'é', '🏆', ' ', '\n', '字'), maxLength: 5000 });
  const action = { command: 'player', args: { page: 1 } };
  const component: fc.Arbitrary<ViewComponent> = fc.oneof(
    fc.record({ type: fc.constant('button' as const), label: text, action: fc.constant(action) }),
    fc.record({
      type: fc.constant('select' as const),
      placeholder: text,
      options: fc.array(fc.record({ label: text, description: text, action: fc.constant(action) }), { maxLength: 40 }),
    }),
  );
  const embed = fc.record({
    title: text,
    description: fc.string({ unit: fc.constantFrom('a', '🏆', ' '), maxLength: 9000 }),
    fields: fc.array(fc.record({ name: text, value: text, inline: fc.boolean() }), { maxLength: 40 }),
    footer: fc.record({ text }),
  });

  it('always yields a message Discord accepts (property)', async () => {
    const store = new ComponentStore(new Keyv());
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          content: text,
          embeds: fc.array(embed, { maxLength: 12 }),
          rows: fc.array(fc.array(component, { maxLength: 8 }), { maxLength: 8 }),
        }),
        async (view) => {
          const msg = await renderView(view, store);
          const problems = checkMessage(msg.body, { files: msg.files.map((f) => ({ name: f.name, size: f.data.length })) });
          expect(describeProblems(problems)).toBe('');
        },
      ),
      { numRuns: 60 },
    );
  });
});
