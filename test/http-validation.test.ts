/**
 * Validation with pydantic v2 semantics. Expected values were produced by pydantic 2.13.4 and
 * email-validator 2.3 (TypeAdapter(...).validate_python(<query string>).errors(include_url=False)),
 * so these tests say what pydantic really does, not what we think it does.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseEmail, emailParam, ipParam, passwordParam, tagParam, countryCodeParam } from '../src/http/params.ts';
import { compileField, compileShape, strAsInt, type ValidationIssue } from '../src/http/pydantic.ts';

type Expected = { ok: unknown } | { type: string; msg: string; ctx?: Record<string, unknown> };

// [query string value, what pydantic 2.13.4 answers]
const PYDANTIC: Record<string, [string, Expected][]> = {
  int: [
    ["0", {"ok": "0"}],
    ["00", {"ok": "0"}],
    ["+0", {"ok": "0"}],
    ["  1  ", {"ok": "1"}],
    ["-1.0", {"ok": "-1"}],
    ["42.00", {"ok": "42"}],
    ["042", {"ok": "42"}],
    ["+4_2", {"ok": "42"}],
    ["-00042_000", {"ok": "-42000"}],
    ["  0_42.0 ", {"ok": "42"}],
    ["123456789.0", {"ok": "123456789"}],
    ["00_", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["0:", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["++4_2", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["-+1", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["--0001", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["-0-001", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["  _042.0 ", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["42_", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["42_.0", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    [" ", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["1.", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["42.", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["5.5", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["abc", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["1e3", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["0x10", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["\u0661\u0662", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["99999999999999999999999", {"ok": "99999999999999999999999"}],
    ["-9223372036854775809", {"ok": "-9223372036854775809"}],
    ["\u00a05\u00a0", {"ok": "5"}],
    ["\u20035", {"ok": "5"}],
    ["\t7\n", {"ok": "7"}],
    ["5\u0085", {"ok": "5"}],
    ["\ufeff5", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["1_000_000", {"ok": "1000000"}],
    ["1__0", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["_1", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["+-1", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["-", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["+", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    [".0", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["0.", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
    ["-0", {"ok": "0"}],
    ["\u22125", {"type": "int_parsing", "msg": "Input should be a valid integer, unable to parse string as an integer"}],
  ],
  ge1le250: [
    ["0", {"type": "greater_than_equal", "msg": "Input should be greater than or equal to 1", "ctx": {"ge": 1}}],
    ["1", {"ok": 1}],
    ["250", {"ok": 250}],
    ["251", {"type": "less_than_equal", "msg": "Input should be less than or equal to 250", "ctx": {"le": 250}}],
    ["-5", {"type": "greater_than_equal", "msg": "Input should be greater than or equal to 1", "ctx": {"ge": 1}}],
    ["1.0", {"ok": 1}],
    [" 250 ", {"ok": 250}],
  ],
  gt0lt10: [
    ["0", {"type": "greater_than", "msg": "Input should be greater than 0", "ctx": {"gt": 0}}],
    ["10", {"type": "less_than", "msg": "Input should be less than 10", "ctx": {"lt": 10}}],
    ["5", {"ok": 5}],
  ],
  mult5: [
    ["6", {"type": "multiple_of", "msg": "Input should be a multiple of 5", "ctx": {"multiple_of": 5}}],
    ["105", {"type": "less_than_equal", "msg": "Input should be less than or equal to 100", "ctx": {"le": 100}}],
    ["110", {"type": "less_than_equal", "msg": "Input should be less than or equal to 100", "ctx": {"le": 100}}],
    ["15", {"ok": 15}],
  ],
  str2: [
    ["a", {"type": "string_too_short", "msg": "String should have at least 2 characters", "ctx": {"min_length": 2}}],
    ["ab", {"ok": "ab"}],
    ["", {"type": "string_too_short", "msg": "String should have at least 2 characters", "ctx": {"min_length": 2}}],
    ["\u00e9", {"type": "string_too_short", "msg": "String should have at least 2 characters", "ctx": {"min_length": 2}}],
    ["\ud83d\udc4d", {"type": "string_too_short", "msg": "String should have at least 2 characters", "ctx": {"min_length": 2}}],
    ["ab ", {"ok": "ab "}],
  ],
  str1max3: [
    ["", {"type": "string_too_short", "msg": "String should have at least 1 character", "ctx": {"min_length": 1}}],
    ["abcd", {"type": "string_too_long", "msg": "String should have at most 3 characters", "ctx": {"max_length": 3}}],
    ["abc", {"ok": "abc"}],
  ],
  pattern: [
    ["01.02.24", {"ok": "01.02.24"}],
    ["1.2.24", {"type": "string_pattern_mismatch", "msg": "String should match pattern '^\\d{2}\\.\\d{2}\\.\\d{2}(\\d{2})?$'", "ctx": {"pattern": "^\\d{2}\\.\\d{2}\\.\\d{2}(\\d{2})?$"}}],
  ],
  litstr: [
    ["low", {"ok": "low"}],
    ["HIGH", {"type": "literal_error", "msg": "Input should be 'low', 'medium' or 'high'", "ctx": {"expected": "'low', 'medium' or 'high'"}}],
    ["", {"type": "literal_error", "msg": "Input should be 'low', 'medium' or 'high'", "ctx": {"expected": "'low', 'medium' or 'high'"}}],
  ],
  litone: [
    ["y", {"type": "literal_error", "msg": "Input should be 'x'", "ctx": {"expected": "'x'"}}],
  ],
  bool: [
    ["true", {"ok": true}],
    ["False", {"ok": false}],
    ["yes", {"ok": true}],
    ["off", {"ok": false}],
    ["1", {"ok": true}],
    ["0", {"ok": false}],
    ["2", {"type": "bool_parsing", "msg": "Input should be a valid boolean, unable to interpret input"}],
    ["", {"type": "bool_parsing", "msg": "Input should be a valid boolean, unable to interpret input"}],
    ["TRUE", {"ok": true}],
    ["On", {"ok": true}],
  ],
  float: [
    ["0.4", {"type": "greater_than_equal", "msg": "Input should be greater than or equal to 0.5", "ctx": {"ge": 0.5}}],
    ["1.5", {"ok": 1.5}],
    ["abc", {"type": "float_parsing", "msg": "Input should be a valid number, unable to parse string as a number"}],
    [" 2.5 ", {"ok": 2.5}],
    ["1_0.5", {"ok": 10.5}],
    ["inf", {"ok": "inf"}],
    ["nan", {"type": "greater_than_equal", "msg": "Input should be greater than or equal to 0.5", "ctx": {"ge": 0.5}}],
  ],};

const DECLARATIONS: Record<string, z.ZodType> = {
  ge1le250: z.int().min(1).max(250),
  gt0lt10: z.int().gt(0).lt(10),
  mult5: z.int().multipleOf(5).max(100),
  str2: z.string().min(2),
  str1max3: z.string().min(1).max(3),
  pattern: z.string().regex(/^\d{2}\.\d{2}\.\d{2}(\d{2})?$/),
  litstr: z.enum(['low', 'medium', 'high']),
  litone: z.literal('x'),
  bool: z.boolean(),
  float: z.number().gte(0.5),
};

function validate(schema: z.ZodType, raw: string | undefined) {
  const issues: ValidationIssue[] = [];
  const value = compileField('v', schema).validate(raw, ['query', 'v'], issues);
  return { value, issues };
}

describe("pydantic-core's lax integer parsing", () => {
  it.each(PYDANTIC.int!)('%j', (input, expected) => {
    const r = strAsInt(input);
    if ('ok' in expected) expect(r).toEqual({ ok: true, value: BigInt(expected.ok as string) });
    else expect(r).toEqual({ ok: false, error: { type: expected.type, msg: expected.msg } });
  });

  it('refuses more than 4300 digits as int_parsing_size, accepts 4300', () => {
    expect(strAsInt('1'.repeat(4301))).toEqual({
      ok: false,
      error: { type: 'int_parsing_size', msg: 'Unable to parse input string as an integer, exceeded maximum size' },
    });
    expect(strAsInt('1'.repeat(4300)).ok).toBe(true);
  });
});

describe('fields declared with zod validate like the same pydantic declaration', () => {
  for (const [name, schema] of Object.entries(DECLARATIONS)) {
    it.each(PYDANTIC[name]!)(`${name} %j`, (input, expected) => {
      const { value, issues } = validate(schema, input);
      if ('ok' in expected) {
        expect(issues).toEqual([]);
        expect(value).toEqual(expected.ok === 'inf' ? Infinity : expected.ok);
      } else {
        expect(issues).toEqual([{ type: expected.type, loc: ['query', 'v'], msg: expected.msg, input, ...(expected.ctx ? { ctx: expected.ctx } : {}) }]);
      }
    });
  }

  it('reports a missing required parameter as FastAPI does (input null), and fills defaults without validating them', () => {
    expect(validate(z.int(), undefined).issues).toEqual([{ type: 'missing', loc: ['query', 'v'], msg: 'Field required', input: null }]);
    expect(validate(z.int().min(1).default(25), undefined)).toEqual({ value: 25, issues: [] });
    expect(validate(z.int().optional(), undefined)).toEqual({ value: undefined, issues: [] });
  });

  it('matches int literals from their query-string form and lists the options like pydantic', () => {
    expect(validate(z.literal([1, 3, 4]), ' 3 ')).toEqual({ value: 3, issues: [] });
    expect(validate(z.literal([1, 3, 4]), '2').issues).toEqual([
      { type: 'literal_error', loc: ['query', 'v'], msg: 'Input should be 1, 3 or 4', input: '2', ctx: { expected: '1, 3 or 4' } },
    ]);
  });

  it('lists every problem of a request at once, in declaration order', () => {
    const shape = compileShape('query', {
      name: z.string().min(2),
      limit: z.int().min(1).max(250).default(50),
      offset: z.int().min(0).max(1000).default(0),
      api_key: z.string(),
    });
    const issues: ValidationIssue[] = [];
    shape.validate({ offset: '1001', limit: 'ten', name: 'a' }, issues);
    expect(issues).toEqual([
      { type: 'string_too_short', loc: ['query', 'name'], msg: 'String should have at least 2 characters', input: 'a', ctx: { min_length: 2 } },
      {
        type: 'int_parsing',
        loc: ['query', 'limit'],
        msg: 'Input should be a valid integer, unable to parse string as an integer',
        input: 'ten',
      },
      {
        type: 'less_than_equal',
        loc: ['query', 'offset'],
        msg: 'Input should be less than or equal to 1000',
        input: '1001',
        ctx: { le: 1000 },
      },
      { type: 'missing', loc: ['query', 'api_key'], msg: 'Field required', input: null },
    ]);
  });
});

describe('parameter types of the API', () => {
  it('accepts tags as %23TAG, #TAG or TAG in any case and hands over #TAG', () => {
    for (const t of ['%232pp0gq9lu', '#2PP0GQ9LU', '2pp0gq9lu', '2PPOGQ9LU']) expect(validate(tagParam, t)).toEqual({ value: '#2PP0GQ9LU', issues: [] });
  });

  it('answers an invalid tag with a value_error whose ctx FastAPI renders as {"error": {}}', () => {
    expect(validate(tagParam, 'hello!').issues).toEqual([
      {
        type: 'value_error',
        loc: ['query', 'v'],
        msg: 'Value error, A tag uses only the characters 0 2 8 9 P Y L Q G R J C U V (the letter O is read as zero).',
        input: 'hello!',
        ctx: { error: {} },
      },
    ]);
    expect(validate(tagParam, '%23').issues[0]?.msg).toBe('Value error, A tag is required.');
    expect(validate(tagParam, '22').issues[0]?.msg).toBe('Value error, A tag has at least 3 characters.');
  });

  it("takes 'global' or an ISO 3166-1 alpha-2 code in any case, and nothing else", () => {
    expect(validate(countryCodeParam, 'GLOBAL').value).toBe('global');
    expect(validate(countryCodeParam, 'kr').value).toBe('KR');
    expect(validate(countryCodeParam, 'Fr').value).toBe('FR');
    for (const bad of ['XX', 'UK', 'EU', 'usa', 'u', '', ' us']) {
      expect(validate(countryCodeParam, bad).issues).toEqual([
        {
          type: 'value_error',
          loc: ['query', 'v'],
          msg: "Value error, countryCode must be 'global' or an ISO 3166-1 alpha-2 country code such as US or fr",
          input: bad,
          ctx: { error: {} },
        },
      ]);
    }
  });

  // [input, pydantic's EmailStr: normalised address, or the reason of its value_error]
  const EMAILS: [string, { ok: string } | { reason: string }][] = [
    ['foo', { reason: 'An email address must have an @-sign.' }],
    ['foo@bar', { reason: 'The part after the @-sign is not valid. It should have a period.' }],
    ['@bar.com', { reason: 'There must be something before the @-sign.' }],
    ['a@', { reason: 'There must be something after the @-sign.' }],
    ['a b@x.com', { reason: 'The email address contains invalid characters before the @-sign: SPACE.' }],
    ['a@x.test', { reason: 'The part after the @-sign is a special-use or reserved name that cannot be used with email.' }],
    ['a..b@x.com', { reason: 'An email address cannot have two periods in a row.' }],
    ['.a@x.com', { reason: 'An email address cannot start with a period.' }],
    ['a.@x.com', { reason: 'An email address cannot have a period immediately before the @-sign.' }],
    ['a@-x.com', { reason: 'An email address cannot have a hyphen immediately after the @-sign.' }],
    ['a@x-.com', { reason: 'An email address cannot have a period and a hyphen next to each other.' }],
    ['a@.x.com', { reason: 'An email address cannot have a period immediately after the @-sign.' }],
    ['a@x.com.', { reason: 'An email address cannot end with a period.' }],
    ['a@x.123', { reason: 'The part after the @-sign is not valid. It is not within a valid top-level domain.' }],
    ['a@b@x.com', { reason: "The part after the @-sign contains invalid characters: '@'." }],
    ['a@x_y.com', { reason: "The part after the @-sign contains invalid characters: '_'." }],
    ['a@localhost', { reason: 'The part after the @-sign is not valid. It should have a period.' }],
    ['"quoted"@x.com', { reason: 'Quoting the part before the @-sign is not allowed here.' }],
    ['a@[1.2.3.4]', { reason: 'A bracketed IP address after the @-sign is not allowed here.' }],
    ['a@x.local', { reason: 'The part after the @-sign is a special-use or reserved name that cannot be used with email.' }],
    ['dev@example.com', { ok: 'dev@example.com' }],
    ['Ünïcode@exämple.com', { ok: 'Ünïcode@exämple.com' }],
    [' a@x.com', { ok: 'a@x.com' }],
    ['John <a@x.com>', { ok: 'a@x.com' }],
    ['a@x.c', { ok: 'a@x.c' }],
  ];

  it.each(EMAILS)('email %j', (input, expected) => {
    const r = parseEmail(input);
    if ('ok' in expected) {
      expect(r).toEqual({ ok: true, email: expected.ok });
      expect(validate(emailParam, input)).toEqual({ value: expected.ok, issues: [] });
    } else {
      expect(validate(emailParam, input).issues).toEqual([
        {
          type: 'value_error',
          loc: ['query', 'v'],
          msg: `value is not a valid email address: ${expected.reason}`,
          input,
          ctx: { reason: expected.reason },
        },
      ]);
    }
  });

  it.each([
    ['1.2.3.4', true],
    ['::ffff:1.2.3.4', true],
    ['fe80::1%eth0', true],
    ['::1', true],
    ['01.2.3.4', false],
    ['1.2.3', false],
    ['256.1.1.1', false],
    [' 1.2.3.4', false],
    ['0x1.2.3.4', false],
  ] as const)('IP %j valid: %s (as IPvAnyAddress)', (input, valid) => {
    const { issues } = validate(ipParam, input);
    expect(issues).toEqual(
      valid ? [] : [{ type: 'ip_any_address', loc: ['query', 'v'], msg: 'value is not a valid IPv4 or IPv6 address', input }],
    );
  });

  it('wants passwords of at least 8 characters, counted in code points', () => {
    expect(validate(passwordParam, '1234567').issues[0]).toMatchObject({ type: 'string_too_short', ctx: { min_length: 8 } });
    expect(validate(passwordParam, '🔑🔑🔑🔑🔑🔑🔑🔑').issues).toEqual([]);
  });
});
