/**
 * Encryption at rest of the API keys servers register: AES-256-GCM under a key derived from
 * STARR_SECRET (scrypt, once per process). The guild id is bound in as associated data, so a
 * sealed key copied to another server's record does not open. Without a secret the vault refuses
 * to seal anything, and the bot says why instead of storing keys in the clear.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';

const VERSION = 'v1';
const SALT = 'starr-stats/guild-api-keys/v1';

export class VaultUnavailableError extends Error {
  constructor() {
    super('STARR_SECRET is not set, so API keys cannot be stored encrypted.');
    this.name = 'VaultUnavailableError';
  }
}

export class VaultOpenError extends Error {
  constructor() {
    super('The stored key cannot be decrypted (STARR_SECRET changed, or the record was altered).');
    this.name = 'VaultOpenError';
  }
}

export class KeyVault {
  private key: Buffer | undefined;

  constructor(private readonly secret: string | undefined) {}

  get available(): boolean {
    return this.secret !== undefined && this.secret !== '';
  }

  private derived(): Buffer {
    if (!this.available) throw new VaultUnavailableError();
    this.key ??= scryptSync(this.secret!, SALT, 32);
    return this.key;
  }

  /** `v1.<iv>.<tag>.<ciphertext>` in base64url. */
  seal(plain: string, guildId: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.derived(), iv);
    cipher.setAAD(Buffer.from(guildId));
    const ct = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
  }

  open(sealed: string, guildId: string): string {
    const [version, iv, tag, ct] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || ct === undefined) throw new VaultOpenError();
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.derived(), Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(guildId));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
    } catch (e) {
      if (e instanceof VaultUnavailableError) throw e;
      throw new VaultOpenError();
    }
  }
}
