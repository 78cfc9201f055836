/**
 * Request validation with FastAPI + pydantic v2 semantics, driven by zod schemas.
 *
 * The interface this API implements was written for FastAPI, so a bad request must get exactly the
 * 422 body FastAPI would send: `{"detail":[{"type","loc","msg","input","ctx"?}]}` with pydantic's
 * error types, messages and lax string parsing (" 42 ", "4_2", "42.0" are the integer 42; "4.5" is
 * not). Routes declare their parameters once, as zod schemas; this module reads those schemas
 * (base type, bounds, lengths, literals, defaults) and validates raw strings the way pydantic
 * would, then runs the schema itself for custom checks and transforms. The same schemas generate
 * the OpenAPI document, so the two cannot drift apart.
 *
 * Supported declarations: z.int() / z.number().int() with min/max/gt/lt/multipleOf, z.number(),
 * z.boolean(), z.string() with min/max/regex, z.literal([...]) and z.enum([...]) (literal_error),
 * wrapped in .optional() / .default(v), plus custom checks made with `pydanticCheck` (own error
 * type) or `.refine(fn, message)` (pydantic's value_error "Value error, <message>").
 */
import { z } from 'zod';

export type Loc = (string | number)[];

/** One entry of FastAPI's 422 `detail` array. */
export interface ValidationIssue {
  type: string;
  loc: Loc;
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** A pydantic error without its location and input (added by the field that failed). */
export interface PydanticError {
  type: string;
  msg: string;
  ctx?: Record<string, unknown>;
}

/** Thrown with every problem of a request; the server answers 422 `{"detail": issues}`. */
export class RequestValidationError extends Error {
  constructor(readonly issues: ValidationIssue[]) {
    super(`${issues.length} validation error${issues.length === 1 ? '' : 's'}`);
    this.name = 'RequestValidationError';
  }
}

// ------------------------------------------------------------------ pydantic's messages

const plural = (n: number) => (n === 1 ? '' : 's');

export const errors = {
  missing: (): PydanticError => ({ type: 'missing', msg: 'Field required' }),
  intParsing: (): PydanticError => ({
    type: 'int_parsing',
    msg: 'Input should be a valid integer, unable to parse string as an integer',
  }),
  intParsingSize: (): PydanticError => ({
    type: 'int_parsing_size',
    msg: 'Unable to parse input string as an integer, exceeded maximum size',
  }),
  floatParsing: (): PydanticError => ({
    type: 'float_parsing',
    msg: 'Input should be a valid number, unable to parse string as a number',
  }),
  boolParsing: (): PydanticError => ({
    type: 'bool_parsing',
    msg: 'Input should be a valid boolean, unable to interpret input',
  }),
  greaterThan: (gt: number): PydanticError => ({
    type: 'greater_than',
    msg: `Input should be greater than ${pyNumber(gt)}`,
    ctx: { gt },
  }),
  greaterThanEqual: (ge: number): PydanticError => ({
    type: 'greater_than_equal',
    msg: `Input should be greater than or equal to ${pyNumber(ge)}`,
    ctx: { ge },
  }),
  lessThan: (lt: number): PydanticError => ({
    type: 'less_than',
    msg: `Input should be less than ${pyNumber(lt)}`,
    ctx: { lt },
  }),
  lessThanEqual: (le: number): PydanticError => ({
    type: 'less_than_equal',
    msg: `Input should be less than or equal to ${pyNumber(le)}`,
    ctx: { le },
  }),
  multipleOf: (multiple_of: number): PydanticError => ({
    type: 'multiple_of',
    msg: `Input should be a multiple of ${pyNumber(multiple_of)}`,
    ctx: { multiple_of },
  }),
  stringTooShort: (min_length: number): PydanticError => ({
    type: 'string_too_short',
    msg: `String should have at least ${min_length} character${plural(min_length)}`,
    ctx: { min_length },
  }),
  stringTooLong: (max_length: number): PydanticError => ({
    type: 'string_too_long',
    msg: `String should have at most ${max_length} character${plural(max_length)}`,
    ctx: { max_length },
  }),
  stringPatternMismatch: (pattern: string): PydanticError => ({
    type: 'string_pattern_mismatch',
    msg: `String should match pattern '${pattern}'`,
    ctx: { pattern },
  }),
  literal: (expected: readonly unknown[]): PydanticError => {
    const text = expectedRepr(expected);
    return { type: 'literal_error', msg: `Input should be ${text}`, ctx: { expected: text } };
  },
  /**
   * A ValueError raised in a validator. FastAPI's jsonable_encoder turns the exception object in
   * ctx.error into `{}`, which is what clients of a FastAPI service see.
   */
  value: (message: string): PydanticError => ({ type: 'value_error', msg: `Value error, ${message}`, ctx: { error: {} } }),
};

/** Python's str() of a number as pydantic prints bounds: integers bare, floats with a decimal point. */
function pyNumber(n: number): string {
  return String(n);
}

/** Python's repr() of a literal value: strings in single quotes (double when they contain one). */
export function pyRepr(v: unknown): string {
  if (typeof v === 'string') {
    if (v.includes("'") && !v.includes('"')) return `"${v}"`;
    return `'${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
  }
  if (typeof v === 'boolean') return v ? 'True' : 'False';
  if (v === null || v === undefined) return 'None';
  return String(v);
}

/** pydantic-core's expected_repr_name: "1, 3 or 4". */
export function expectedRepr(values: readonly unknown[]): string {
  const reprs = values.map(pyRepr);
  const last = reprs.pop() ?? '';
  return reprs.length === 0 ? last : `${reprs.join(', ')} or ${last}`;
}

// ------------------------------------------------------------------ pydantic-core's lax string parsing

/** Rust's str::trim (Unicode White_Space), which differs from JavaScript's trim at U+0085 and U+FEFF. */
const RUST_WS = '\\t\\n\\v\\f\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
const RUST_TRIM = new RegExp(`^[${RUST_WS}]+|[${RUST_WS}]+$`, 'g');
const rustTrim = (s: string) => s.replace(RUST_TRIM, '');

/** Python refuses to parse integers longer than this many digits (CVE-2020-10735). */
const MAX_INT_DIGITS = 4300;

/**
 * jiter's NumberInt::try_from: a JSON integer (`-?(0|[1-9][0-9]*)`) spanning the whole string.
 * 'size' when the digits run past Python's limit, null when it is not such an integer.
 */
function jsonInt(s: string): bigint | 'size' | null {
  const m = /^-?(0|[1-9][0-9]*)/.exec(s);
  if (!m) return null;
  if (m[1]!.length > MAX_INT_DIGITS) return 'size';
  return m[0].length === s.length ? BigInt(s) : null;
}

/** pydantic-core's strip_underscores: only when there are some, none at either end, none doubled. */
function stripUnderscores(s: string): string | null {
  if (s.startsWith('_') || s.endsWith('_') || !s.includes('_') || s.includes('__')) return null;
  return s.replace(/_/g, '');
}

/** pydantic-core's strip_leading_zeros, keeping one zero before a '.' or when all are zeros. */
function stripLeadingZeros(s: string): string | null {
  const first = s[0];
  if (first === undefined) return null;
  if (first !== '0') return (first >= '1' && first <= '9') || first === '-' ? s : null;
  for (let i = 1; i < s.length; i++) {
    const c = s[i]!;
    if (c === '0' || c === '_') continue;
    if ((c >= '1' && c <= '9') || c === '-') return s.slice(i);
    if (c === '.') return s.slice(i - 1);
    return null;
  }
  return s.slice(s.length - 1);
}

/** pydantic-core's clean_int_str: null when there was nothing to clean (itself a parsing error). */
function cleanIntStr(original: string): string | null {
  let s = rustTrim(original);
  if (s.startsWith('+')) {
    if (s.startsWith('+-')) return null;
    s = s.slice(1);
  }
  let negative = false;
  if (s.startsWith('-')) {
    if (s.startsWith('--') || s.startsWith('-+')) return null;
    negative = true;
    s = s.slice(1);
  }
  const stripped = stripLeadingZeros(s);
  if (stripped === null) return null;
  s = stripped;
  const dot = s.indexOf('.');
  if (dot >= 0) {
    const decimals = s.slice(dot + 1);
    if (decimals !== '' && /^0+$/.test(decimals)) s = s.slice(0, dot);
  }
  const sign = negative ? '-' : '';
  const noUnderscores = stripUnderscores(s);
  if (noUnderscores !== null) return sign + noUnderscores;
  if (original.length === s.length) return null;
  return sign + s;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: PydanticError };

/** pydantic-core's str_as_int (lax mode), exact to its test table. */
export function strAsInt(s: string): ParseResult<bigint> {
  const direct = jsonInt(s);
  if (direct === 'size') return { ok: false, error: errors.intParsingSize() };
  if (direct !== null) return { ok: true, value: direct };
  const cleaned = cleanIntStr(s);
  const again = cleaned === null ? null : jsonInt(cleaned);
  if (again === null || again === 'size') return { ok: false, error: errors.intParsing() };
  return { ok: true, value: again };
}

/** pydantic-core's str_as_float: Rust's f64 parser (inf, nan, exponents), then underscores. */
export function strAsFloat(s: string): ParseResult<number> {
  const parse = (t: string): number | null => {
    if (/^[+-]?(inf|infinity)$/i.test(t)) return t.startsWith('-') ? -Infinity : Infinity;
    if (/^[+-]?nan$/i.test(t)) return Number.NaN;
    return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(t) ? Number(t) : null;
  };
  const v = parse(rustTrim(s)) ?? (stripUnderscores(s) === null ? null : parse(stripUnderscores(s)!));
  return v === null ? { ok: false, error: errors.floatParsing() } : { ok: true, value: v };
}

/** pydantic-core's str_as_bool. */
export function strAsBool(s: string): ParseResult<boolean> {
  const l = s.toLowerCase();
  if (s === '0' || ['f', 'n', 'no', 'off', 'false'].includes(l)) return { ok: true, value: false };
  if (s === '1' || ['t', 'y', 'on', 'yes', 'true'].includes(l)) return { ok: true, value: true };
  return { ok: false, error: errors.boolParsing() };
}

// ------------------------------------------------------------------ custom checks

interface PydanticIssueParams {
  pydantic: PydanticError;
}

/**
 * A zod check whose failure is reported as the given pydantic error (instead of value_error), e.g.
 * `z.string().check(pydanticCheck(v => isIP(v) ? null : {type: 'ip_any_address', msg: '...'}))`.
 */
export function pydanticCheck<T>(validate: (value: T) => PydanticError | null) {
  return (ctx: z.core.ParsePayload<T>) => {
    const problem = validate(ctx.value);
    if (problem) {
      const params: PydanticIssueParams = { pydantic: problem };
      ctx.issues.push({ code: 'custom', message: problem.msg, input: ctx.value, params });
    }
  };
}

// ------------------------------------------------------------------ reading zod schemas

type Def = { type: string; [k: string]: unknown };
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;
type CheckDef = { check: string; [k: string]: unknown };
const checksOf = (s: z.ZodType): CheckDef[] =>
  ((defOf(s).checks as { _zod: { def: CheckDef } }[] | undefined) ?? []).map((c) => c._zod.def);

type Kind = 'int' | 'float' | 'bool' | 'str' | 'literal' | 'any';

interface Bounds {
  ge?: number;
  gt?: number;
  le?: number;
  lt?: number;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: RegExp;
}

interface FieldPlan {
  kind: Kind;
  required: boolean;
  bounds: Bounds;
  literals: readonly unknown[];
}

const INT_FORMATS = new Set(['safeint', 'int32', 'uint32', 'int64', 'uint64']);

/** What pydantic would be told about this field: its base type, bounds and whether it is required. */
export function planField(schema: z.ZodType): FieldPlan {
  let s = schema;
  let required = true;
  for (;;) {
    const d = defOf(s);
    if (d.type === 'optional' || d.type === 'default' || d.type === 'prefault') {
      required = false;
      s = d.innerType as z.ZodType;
    } else if (d.type === 'nullable' || d.type === 'readonly') {
      s = d.innerType as z.ZodType;
    } else if (d.type === 'pipe') {
      s = d.in as z.ZodType;
    } else {
      break;
    }
  }
  const d = defOf(s);
  const checks = checksOf(s);
  const bounds: Bounds = {};
  let kind: Kind = 'any';
  let literals: readonly unknown[] = [];
  if (d.type === 'number') {
    const isInt = INT_FORMATS.has(String(d.format)) || checks.some((c) => c.check === 'number_format' && INT_FORMATS.has(String(c.format)));
    kind = isInt ? 'int' : 'float';
  } else if (d.type === 'boolean') {
    kind = 'bool';
  } else if (d.type === 'string') {
    kind = 'str';
  } else if (d.type === 'literal') {
    kind = 'literal';
    literals = d.values as unknown[];
  } else if (d.type === 'enum') {
    kind = 'literal';
    literals = Object.values(d.entries as Record<string, unknown>);
  }
  for (const c of checks) {
    if (c.check === 'greater_than') {
      if (c.inclusive) bounds.ge = c.value as number;
      else bounds.gt = c.value as number;
    } else if (c.check === 'less_than') {
      if (c.inclusive) bounds.le = c.value as number;
      else bounds.lt = c.value as number;
    } else if (c.check === 'multiple_of') {
      bounds.multipleOf = c.value as number;
    } else if (c.check === 'min_length') {
      bounds.minLength = c.minimum as number;
    } else if (c.check === 'max_length') {
      bounds.maxLength = c.maximum as number;
    } else if (c.check === 'length_equals') {
      bounds.minLength = c.length as number;
      bounds.maxLength = c.length as number;
    } else if (c.check === 'string_format' && c.format === 'regex') {
      bounds.pattern = c.pattern as RegExp;
    }
  }
  return { kind, required, bounds, literals };
}

function cmp(a: bigint, b: number): number {
  if (Number.isInteger(b)) return a < BigInt(b) ? -1 : a > BigInt(b) ? 1 : 0;
  const n = Number(a);
  return n < b ? -1 : n > b ? 1 : 0;
}

/** pydantic-core's ConstrainedIntValidator, which reports the first failing bound in this order. */
function intBounds(v: bigint, b: Bounds): PydanticError | null {
  if (b.multipleOf !== undefined && Number.isInteger(b.multipleOf) && b.multipleOf !== 0 && v % BigInt(b.multipleOf) !== 0n) {
    return errors.multipleOf(b.multipleOf);
  }
  if (b.le !== undefined && cmp(v, b.le) > 0) return errors.lessThanEqual(b.le);
  if (b.lt !== undefined && cmp(v, b.lt) >= 0) return errors.lessThan(b.lt);
  if (b.ge !== undefined && cmp(v, b.ge) < 0) return errors.greaterThanEqual(b.ge);
  if (b.gt !== undefined && cmp(v, b.gt) <= 0) return errors.greaterThan(b.gt);
  return null;
}

function floatBounds(v: number, b: Bounds): PydanticError | null {
  if (b.multipleOf !== undefined && b.multipleOf !== 0 && v % b.multipleOf !== 0) return errors.multipleOf(b.multipleOf);
  if (b.le !== undefined && !(v <= b.le)) return errors.lessThanEqual(b.le);
  if (b.lt !== undefined && !(v < b.lt)) return errors.lessThan(b.lt);
  if (b.ge !== undefined && !(v >= b.ge)) return errors.greaterThanEqual(b.ge);
  if (b.gt !== undefined && !(v > b.gt)) return errors.greaterThan(b.gt);
  return null;
}

function strBounds(v: string, b: Bounds): PydanticError | null {
  const length = [...v].length; // Python counts code points
  if (b.minLength !== undefined && length < b.minLength) return errors.stringTooShort(b.minLength);
  if (b.maxLength !== undefined && length > b.maxLength) return errors.stringTooLong(b.maxLength);
  if (b.pattern && !new RegExp(b.pattern.source, b.pattern.flags.replace('g', '')).test(v)) {
    return errors.stringPatternMismatch(b.pattern.source);
  }
  return null;
}

function matchLiteral(raw: string, literals: readonly unknown[]): ParseResult<unknown> {
  for (const l of literals) {
    if (typeof l === 'string' && raw === l) return { ok: true, value: l };
  }
  // Literal ints and bools accept their lax string forms ("1", " 1 ", "true"). pydantic 2.13 keeps
  // Literal[1, 3] strict, so a query string could never match it; a FastAPI service declares such
  // an option table so that it works (e.g. with a BeforeValidator(int)), which is what we mirror:
  // same literal_error type and message, usable from a URL.
  for (const l of literals) {
    if (typeof l === 'number') {
      const r = strAsInt(raw);
      if (r.ok && cmp(r.value, l) === 0) return { ok: true, value: l };
    } else if (typeof l === 'boolean') {
      const r = strAsBool(raw);
      if (r.ok && r.value === l) return { ok: true, value: l };
    }
  }
  return { ok: false, error: errors.literal(literals) };
}

/** Integers outside JavaScript's exact range saturate (bounds were already checked exactly). */
function toNumber(v: bigint): number {
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  if (v > max) return Number.MAX_SAFE_INTEGER;
  if (v < -max) return -Number.MAX_SAFE_INTEGER;
  return Number(v);
}

/** The first problem zod reports, in pydantic's words. */
function fromZodIssue(issue: z.core.$ZodIssue): PydanticError {
  const params = (issue as { params?: Partial<PydanticIssueParams> }).params;
  if (issue.code === 'custom' && params?.pydantic) return params.pydantic;
  return errors.value(issue.message);
}

export interface CompiledField {
  name: string;
  required: boolean;
  /** Validates one raw value; pushes at most one issue (pydantic stops at a field's first error). */
  validate(raw: string | undefined, loc: Loc, issues: ValidationIssue[]): unknown;
}

export function compileField(name: string, schema: z.ZodType): CompiledField {
  const plan = planField(schema);
  // The default, worked out once when it is a plain value (objects are made afresh each time, as
  // FastAPI copies mutable defaults).
  const absent = schema.safeParse(undefined);
  const fixedDefault = absent.success && (absent.data === null || typeof absent.data !== 'object') ? { value: absent.data } : undefined;
  const fail = (e: PydanticError, loc: Loc, input: unknown, issues: ValidationIssue[]) => {
    issues.push({ type: e.type, loc, msg: e.msg, input, ...(e.ctx ? { ctx: e.ctx } : {}) });
    return undefined;
  };
  return {
    name,
    required: plan.required,
    validate(raw, loc, issues) {
      if (raw === undefined) {
        // FastAPI reports a missing parameter with input null, and never validates defaults.
        if (plan.required) return fail(errors.missing(), loc, null, issues);
        if (fixedDefault) return fixedDefault.value;
        const d = schema.safeParse(undefined);
        return d.success ? d.data : undefined;
      }
      let value: unknown = raw;
      let problem: PydanticError | null = null;
      switch (plan.kind) {
        case 'int': {
          const r = strAsInt(raw);
          if (!r.ok) problem = r.error;
          else {
            problem = intBounds(r.value, plan.bounds);
            value = toNumber(r.value);
          }
          break;
        }
        case 'float': {
          const r = strAsFloat(raw);
          if (!r.ok) problem = r.error;
          else {
            problem = floatBounds(r.value, plan.bounds);
            value = r.value;
          }
          break;
        }
        case 'bool': {
          const r = strAsBool(raw);
          if (!r.ok) problem = r.error;
          else value = r.value;
          break;
        }
        case 'str':
          problem = strBounds(raw, plan.bounds);
          break;
        case 'literal': {
          const r = matchLiteral(raw, plan.literals);
          if (!r.ok) problem = r.error;
          else value = r.value;
          break;
        }
        case 'any':
          break;
      }
      if (problem) return fail(problem, loc, raw, issues);
      // zod refuses inf and nan, which Python's float accepts; nothing more to check on them.
      if (typeof value === 'number' && !Number.isFinite(value)) return value;
      // The schema itself runs last: custom checks (after-validators) and transforms.
      const parsed = schema.safeParse(value);
      if (parsed.success) return parsed.data;
      return fail(fromZodIssue(parsed.error.issues[0]!), loc, raw, issues);
    },
  };
}

export type Shape = Record<string, z.ZodType>;

export interface CompiledShape<S extends Shape> {
  fields: CompiledField[];
  /** Validates every field (all problems are pushed, in declaration order) and returns the values. */
  validate(raw: Record<string, string | undefined>, issues: ValidationIssue[]): z.output<z.ZodObject<S>>;
}

export function compileShape<S extends Shape>(where: 'path' | 'query' | 'header', shape: S): CompiledShape<S> {
  const fields = Object.entries(shape).map(([name, schema]) => compileField(name, schema));
  return {
    fields,
    validate(raw, issues) {
      const out: Record<string, unknown> = {};
      for (const f of fields) {
        const v = f.validate(Object.hasOwn(raw, f.name) ? raw[f.name] : undefined, [where, f.name], issues);
        if (v !== undefined) out[f.name] = v;
      }
      return out as z.output<z.ZodObject<S>>;
    },
  };
}
