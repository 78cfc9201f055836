/**
 * Typed failures of the official API. Each front door maps these to its own words: a 404/503 body
 * in the HTTP API, an ephemeral reply in Discord, an exit code in the CLI.
 */

export type UpstreamErrorKind =
  | 'not_found'
  | 'maintenance'
  | 'throttled'
  | 'access_denied'
  | 'unavailable'
  | 'malformed_response'
  | 'bad_request';

export abstract class UpstreamError extends Error {
  abstract readonly kind: UpstreamErrorKind;
  constructor(
    message: string,
    /** HTTP status upstream answered with, 0 when no answer arrived */
    readonly status: number,
    /** the upstream `reason`, when the body had one */
    readonly reason?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** 404: the tag or id does not exist. */
export class NotFoundError extends UpstreamError {
  readonly kind = 'not_found' as const;
}

/** 503 inMaintenance: the whole API is down for a game update, usually 10 to 60 minutes. */
export class MaintenanceError extends UpstreamError {
  readonly kind = 'maintenance' as const;
}

/** 429: this token went over its limit. */
export class ThrottledError extends UpstreamError {
  readonly kind = 'throttled' as const;
  constructor(
    message: string,
    status: number,
    reason?: string,
    /** seconds to wait, from Retry-After when upstream sent one */
    readonly retryAfterSeconds?: number,
  ) {
    super(message, status, reason);
  }
}

/** 403: bad or missing token, or (accessDenied.invalidIp) a token not allowed from this IP. */
export class AccessDeniedError extends UpstreamError {
  readonly kind = 'access_denied' as const;
  constructor(
    message: string,
    status: number,
    reason?: string,
    /** the caller IP upstream reported for accessDenied.invalidIp */
    readonly ip?: string,
  ) {
    super(message, status, reason);
  }
}

/** 5xx other than maintenance, timeouts and dropped connections, after retries. */
export class UnavailableError extends UpstreamError {
  readonly kind = 'unavailable' as const;
}

/** A 2xx whose body is not JSON or does not match the schema. */
export class MalformedResponseError extends UpstreamError {
  readonly kind = 'malformed_response' as const;
}

/** 400: upstream rejected our parameters (a bad cursor, both before and after). */
export class BadRequestError extends UpstreamError {
  readonly kind = 'bad_request' as const;
}

export function isUpstreamError(e: unknown): e is UpstreamError {
  return e instanceof UpstreamError;
}

/** An upstream error as plain data, to hand to another process (see src/core/peer-flights.ts). */
export interface PlainUpstreamError {
  kind: UpstreamErrorKind;
  message: string;
  status: number;
  reason?: string;
  retryAfterSeconds?: number;
}

export function plainError(error: UpstreamError): PlainUpstreamError {
  const p: PlainUpstreamError = { kind: error.kind, message: error.message, status: error.status };
  if (error.reason !== undefined) p.reason = error.reason;
  if (error instanceof ThrottledError && error.retryAfterSeconds !== undefined) p.retryAfterSeconds = error.retryAfterSeconds;
  return p;
}

/** The error another process saw, rebuilt in this one (same class, so the same handling). */
export function reviveError(h: PlainUpstreamError): UpstreamError {
  switch (h.kind) {
    case 'maintenance':
      return new MaintenanceError(h.message, h.status, h.reason);
    case 'throttled':
      return new ThrottledError(h.message, h.status, h.reason, h.retryAfterSeconds);
    case 'malformed_response':
      return new MalformedResponseError(h.message, h.status, h.reason);
    case 'not_found':
      return new NotFoundError(h.message, h.status, h.reason);
    case 'access_denied':
      return new AccessDeniedError(h.message, h.status, h.reason);
    case 'bad_request':
      return new BadRequestError(h.message, h.status, h.reason);
    default:
      return new UnavailableError(h.message, h.status, h.reason);
  }
}
