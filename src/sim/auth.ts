/**
 * API keys of the simulated world, shaped like the official ones: HS512 JWTs whose payload lists the
 * caller IPs the key is valid from in `limits[type=client].cidrs`. The signing secret derives from
 * the world seed, so a key printed by `starr sim` keeps working after a restart with the same seed.
 */
import { createHash, createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { isIPv4 } from 'node:net';

export interface TokenOptions {
  /** caller IPs (or IPv4 CIDR ranges) the key accepts; default loopback only */
  ips?: string[];
  /** issued-at, epoch seconds (defaults to now) */
  iat?: number;
}

export type AuthFailure =
  | { status: 403; body: { reason: 'accessDenied'; message: 'Missing authorization' } }
  | { status: 403; body: { reason: 'accessDenied'; message: 'Invalid authorization' } }
  | { status: 403; body: { reason: 'accessDenied.invalidIp'; message: string } };

export const LOOPBACK_IPS = ['127.0.0.1', '::1'];

export class SimKeys {
  private readonly secret: Buffer;

  constructor(seed: string) {
    this.secret = createHash('sha512').update(`starr-sim-key:${seed}`).digest();
  }

  issue(opts: TokenOptions = {}): string {
    const header = { typ: 'JWT', alg: 'HS512', kid: '28a318f7-0000-a1eb-7fa1-2c7433c6cca5' };
    const payload = {
      iss: 'supercell',
      aud: 'supercell:gameapi',
      jti: randomUUID(),
      iat: opts.iat ?? Math.floor(Date.now() / 1000),
      sub: `developer/${randomUUID()}`,
      scopes: ['brawlstars'],
      limits: [
        { tier: 'developer/silver', type: 'throttling' },
        { cidrs: opts.ips ?? LOOPBACK_IPS, type: 'client' },
      ],
    };
    const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const body = `${enc(header)}.${enc(payload)}`;
    return `${body}.${this.sign(body)}`;
  }

  private sign(body: string): string {
    return createHmac('sha512', this.secret).update(body).digest('base64url');
  }

  /** null when the request may proceed, else the official 403 body. */
  check(authorization: string | undefined, callerIp: string): AuthFailure | null {
    if (!authorization || !/^Bearer\s+\S/i.test(authorization)) {
      return { status: 403, body: { reason: 'accessDenied', message: 'Missing authorization' } };
    }
    const token = authorization.replace(/^Bearer\s+/i, '').trim();
    const invalid: AuthFailure = { status: 403, body: { reason: 'accessDenied', message: 'Invalid authorization' } };
    const parts = token.split('.');
    if (parts.length !== 3) return invalid;
    const expected = Buffer.from(this.sign(`${parts[0]}.${parts[1]}`));
    const given = Buffer.from(parts[2]!);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) return invalid;
    let payload: { scopes?: unknown; limits?: { type?: string; cidrs?: unknown }[] };
    try {
      payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8'));
    } catch {
      return invalid;
    }
    if (!Array.isArray(payload.scopes) || !payload.scopes.includes('brawlstars')) return invalid;
    const ip = plainIp(callerIp);
    const cidrs = (payload.limits ?? []).filter((l) => l.type === 'client').flatMap((l) => (Array.isArray(l.cidrs) ? l.cidrs : []));
    if (!cidrs.some((c) => typeof c === 'string' && ipMatches(ip, c))) {
      return {
        status: 403,
        body: { reason: 'accessDenied.invalidIp', message: `Invalid authorization: API key does not allow access from IP ${ip}` },
      };
    }
    return null;
  }
}

/** `::ffff:127.0.0.1` → `127.0.0.1`. */
export function plainIp(ip: string): string {
  return ip.startsWith('::ffff:') && isIPv4(ip.slice(7)) ? ip.slice(7) : ip;
}

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((a, o) => a * 256 + Number(o), 0);
}

function ipMatches(ip: string, rule: string): boolean {
  if (rule === ip) return true;
  const m = /^(\d+\.\d+\.\d+\.\d+)\/(\d+)$/.exec(rule);
  if (m && isIPv4(ip) && isIPv4(m[1]!)) {
    const bits = Number(m[2]);
    if (bits === 0) return true;
    const mask = bits >= 32 ? 0xffffffff : (0xffffffff << (32 - bits)) >>> 0;
    return ((ipv4ToInt(ip) & mask) >>> 0) === ((ipv4ToInt(m[1]!) & mask) >>> 0);
  }
  return rule === '::/0' && ip.includes(':');
}
