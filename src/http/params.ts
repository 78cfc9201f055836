/**
 * The parameter types of the API, as zod schemas the route helper validates with pydantic
 * semantics (see pydantic.ts) and documents in OpenAPI. A route declares e.g.
 * `params: { tag: tagParam }, query: { limit: z.int().default(25) }`.
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { explainTagProblem, normaliseTag, parseTag, tagProblem, TAG_ALPHABET } from '../upstream/tags.ts';
import { parseRegion } from './countries.ts';
import { errors, pydanticCheck, pyRepr, type PydanticError } from './pydantic.ts';

/**
 * A player or club tag in a path: `%23TAG`, `#TAG` or `TAG`, any case, O read as 0. An invalid tag
 * is pydantic's value_error; the handler receives the canonical `#TAG`.
 */
export const tagParam = z
  .string()
  .check(
    pydanticCheck<string>((v) => {
      const problem = tagProblem(normaliseTag(v));
      return problem ? errors.value(explainTagProblem(problem)) : null;
    }),
  )
  // Documentation sits on the input side: zod documents a parameter by what the client sends.
  .meta({
    description:
      `Player or club tag, with or without its leading # (written %23 in a URL), in any case; the letter O is read as ` +
      `zero. Tags use the characters ${TAG_ALPHABET}. An invalid tag answers 422 with type "value_error".`,
    examples: ['%232PP0GQ9LU', '2PP0GQ9LU'],
  })
  .transform((v) => parseTag(v));

/** 'global' or an ISO 3166-1 alpha-2 code in any case; the handler receives 'global' or the upper-case code. */
export const countryCodeParam = z
  .string()
  .check(
    pydanticCheck<string>((v) =>
      parseRegion(v) ? null : errors.value("countryCode must be 'global' or an ISO 3166-1 alpha-2 country code such as US or fr"),
    ),
  )
  .meta({
    description:
      "'global' or a two-letter ISO 3166-1 alpha-2 country code, in any case. Anything else answers 422 with type \"value_error\".",
    examples: ['global', 'US', 'fr'],
  })
  .transform((v) => parseRegion(v)!);

/** An integer id (brawlers, maps). */
export const idParam = (description: string, example: number) => z.int().meta({ description, examples: [example] });

/** api_key as the interface declares it: a string, optional except on premium endpoints. */
export const apiKeyParam = (required: boolean) =>
  (required ? z.string() : z.string().optional()).meta({
    description: required
      ? 'API key (premium endpoint: required). Get one from POST /generate-api-keys.'
      : 'API key (optional). Without one the free plan applies, limited per client IP.',
  });

// ------------------------------------------------------------------ email, IP, password

/** The special-use names python-email-validator refuses (RFC 6761 and friends). */
const SPECIAL_USE_DOMAINS = ['arpa', 'invalid', 'local', 'localhost', 'onion', 'test'];
const ATEXT = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~\u0080-\u{10ffff}-]$/u;
const DOMAIN_CHAR = /^[A-Za-z0-9.\u0080-\u{10ffff}-]$/u;
const MAX_EMAIL_LENGTH = 2048;
/** pydantic's pretty_email_regex: `Name <address>` is accepted and reduced to the address. */
const PRETTY_EMAIL =
  /^\s*(?:((?:[\p{L}\p{N}_!#$%&'*+\-/=?^`{|}~]+\s+)*[\p{L}\p{N}_!#$%&'*+\-/=?^`{|}~]+)|"((?:[^"]|\\")+)")?\s*<(.+)>\s*$/u;

/** python-email-validator's safe_character_display, for the characters it names. */
function showChar(c: string): string {
  if (c === '\\') return '"\\"';
  if (/^[\p{L}\p{N}\p{P}\p{S}]$/u.test(c)) return pyRepr(c);
  if (c === ' ') return 'SPACE';
  if (c === '\u00a0') return 'NO-BREAK SPACE';
  return `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
}
const charList = (chars: string[]) => [...new Set(chars)].sort().map(showChar).join(', ');

/** python-email-validator's check_dot_atom. */
function dotAtomProblem(label: string, start: string, end: string, hostname: boolean): string | null {
  if (label.endsWith('.')) return end.replace('{}', 'period');
  if (label.startsWith('.')) return start.replace('{}', 'period');
  if (label.includes('..')) return 'An email address cannot have two periods in a row.';
  if (hostname) {
    if (label.endsWith('-')) return end.replace('{}', 'hyphen');
    if (label.startsWith('-')) return start.replace('{}', 'hyphen');
    if (label.includes('.-') || label.includes('-.')) return 'An email address cannot have a period and a hyphen next to each other.';
  }
  return null;
}

export type EmailResult = { ok: true; email: string } | { ok: false; reason: string };

/**
 * pydantic's EmailStr: `Name <address>` reduced to the address, trimmed, then python-email-validator's
 * syntax checks (no DNS), in its order and words. The result is the normalised address.
 */
export function parseEmail(value: string): EmailResult {
  if (value.length > MAX_EMAIL_LENGTH) return { ok: false, reason: `Length must not exceed ${MAX_EMAIL_LENGTH} characters` };
  const pretty = PRETTY_EMAIL.exec(value);
  const email = (pretty ? pretty[3]! : value).trim();
  const fail = (reason: string): EmailResult => ({ ok: false, reason });
  if (email.startsWith('"')) return fail('Quoting the part before the @-sign is not allowed here.');
  if (email.includes('<') && !pretty) {
    return fail('An open angle bracket at the start of the email address has to be followed by a close angle bracket at the end.');
  }
  const at = email.indexOf('@');
  if (at < 0) return fail('An email address must have an @-sign.');
  const local = email.slice(0, at);
  const domain = email.slice(at + 1);
  if (local.length === 0) return fail('There must be something before the @-sign.');
  if (domain.length === 0) return fail('There must be something after the @-sign.');
  const badLocal = [...local].filter((c) => c !== '.' && !ATEXT.test(c));
  if (badLocal.length > 0) return fail(`The email address contains invalid characters before the @-sign: ${charList(badLocal)}.`);
  const localDots = dotAtomProblem(local, 'An email address cannot start with a {}.', 'An email address cannot have a {} immediately before the @-sign.', false);
  if (localDots) return fail(localDots);
  if (domain.startsWith('[') && domain.endsWith(']')) return fail('A bracketed IP address after the @-sign is not allowed here.');
  const badDomain = [...domain].filter((c) => !DOMAIN_CHAR.test(c));
  if (badDomain.length > 0) return fail(`The part after the @-sign contains invalid characters: ${charList(badDomain)}.`);
  const domainDots = dotAtomProblem(domain, 'An email address cannot have a {} immediately after the @-sign.', 'An email address cannot end with a {}.', true);
  if (domainDots) return fail(domainDots);
  const lower = domain.toLowerCase();
  if (!lower.includes('.')) return fail('The part after the @-sign is not valid. It should have a period.');
  if (SPECIAL_USE_DOMAINS.some((d) => lower === d || lower.endsWith(`.${d}`))) {
    return fail('The part after the @-sign is a special-use or reserved name that cannot be used with email.');
  }
  if (!/^\p{L}/u.test(lower.slice(lower.lastIndexOf('.') + 1))) {
    return fail('The part after the @-sign is not valid. It is not within a valid top-level domain.');
  }
  return { ok: true, email: `${local.normalize('NFC')}@${lower.normalize('NFC')}` };
}

/** pydantic's EmailStr failure: value_error with the reason in ctx. */
export const emailError = (reason: string): PydanticError => ({
  type: 'value_error',
  msg: `value is not a valid email address: ${reason}`,
  ctx: { reason },
});

export const emailParam = z
  .string()
  .check(
    pydanticCheck<string>((v) => {
      const r = parseEmail(v);
      return r.ok ? null : emailError(r.reason);
    }),
  )
  .meta({ format: 'email', description: 'Email address of the account (case is ignored).', examples: ['dev@example.com'] })
  .transform((v) => (parseEmail(v) as { email: string }).email);

/** pydantic's IPvAnyAddress. */
export const ipParam = z
  .string()
  .check(
    pydanticCheck<string>((v) =>
      isIP(v) ? null : { type: 'ip_any_address', msg: 'value is not a valid IPv4 or IPv6 address' },
    ),
  )
  .meta({
    format: 'ipvanyaddress',
    description: 'IPv4 or IPv6 address of the machine that will use the key (recorded with the key).',
    examples: ['203.0.113.7'],
  });

export const PASSWORD_MIN_LENGTH = 8;

export const passwordParam = z.string().min(PASSWORD_MIN_LENGTH).meta({
  format: 'password',
  description: `Password of the account, at least ${PASSWORD_MIN_LENGTH} characters. Chosen on first use; needed for every later key.`,
});
