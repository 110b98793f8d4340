// Secrets sealed at rest (docs/security.md): AES-256-GCM under a key derived from the operator's
// SECRETS_KEY. A sealed value names the key it was sealed with, so that a rotation can keep the
// previous keys for opening while everything new is sealed with the current one.
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';

const prefix = 'sealed:v1:';
const ivBytes = 12;
const tagBytes = 16;

/** A sealed value that cannot be opened: tampered with, or sealed under a key this process lacks (`missingKeyId`). */
export class SealError extends Error {
  constructor(
    message: string,
    readonly missingKeyId?: string,
  ) {
    super(message);
  }
}

interface Key {
  id: string;
  bytes: Buffer;
}

function deriveKey(material: string): Key {
  const bytes = Buffer.from(hkdfSync('sha256', material, 'shutterbus', 'sealed secrets v1', 32));
  // The id only tells keys apart; it reveals nothing usable about the key.
  const id = createHash('sha256').update(bytes).digest('base64url').slice(0, 8);
  return { id, bytes };
}

/** Seals and opens secrets; `previous` keys only open (a rotation in progress). */
export class Sealer {
  readonly #current: Key;
  readonly #byId: Map<string, Key>;

  constructor(current: string, previous: readonly string[] = []) {
    this.#current = deriveKey(current);
    this.#byId = new Map([...previous.map(deriveKey), this.#current].map((key) => [key.id, key]));
  }

  /** `sealed:v1:<key id>:<base64url of iv, ciphertext and tag>`; a new random iv each time. */
  seal(plain: string): string {
    const iv = randomBytes(ivBytes);
    const cipher = createCipheriv('aes-256-gcm', this.#current.bytes, iv);
    cipher.setAAD(Buffer.from(this.#current.id));
    const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${prefix}${this.#current.id}:${body.toString('base64url')}`;
  }

  open(sealed: string): string {
    if (!Sealer.isSealed(sealed)) throw new SealError('not a sealed value');
    const [id, encoded] = sealed.slice(prefix.length).split(':', 2);
    const key = this.#byId.get(id);
    if (!key)
      throw new SealError(
        `sealed with a key this process does not have (${id}); set SECRETS_KEY or SECRETS_KEY_PREVIOUS`,
        id,
      );
    const body = Buffer.from(encoded ?? '', 'base64url');
    if (body.length < ivBytes + tagBytes) throw new SealError('sealed value is truncated');
    const decipher = createDecipheriv('aes-256-gcm', key.bytes, body.subarray(0, ivBytes));
    decipher.setAAD(Buffer.from(id));
    decipher.setAuthTag(body.subarray(body.length - tagBytes));
    try {
      return Buffer.concat([
        decipher.update(body.subarray(ivBytes, body.length - tagBytes)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SealError('sealed value was tampered with');
    }
  }

  /** The id of the key this process seals with (what a sealed value names; reveals nothing of the key). */
  get keyId(): string {
    return this.#current.id;
  }

  /** True when this process holds the key `keyId` (its current key or a previous one). */
  holds(keyId: string): boolean {
    return this.#byId.has(keyId);
  }

  /** True when `sealed` was sealed under a key other than the current one (a rotation re-seals it). */
  isStale(sealed: string): boolean {
    return !sealed.startsWith(`${prefix}${this.#current.id}:`);
  }

  /** The id of the key `sealed` names. */
  static keyIdOf(sealed: string): string {
    return sealed.slice(prefix.length).split(':', 1)[0];
  }

  static isSealed(value: unknown): value is string {
    return typeof value === 'string' && value.startsWith(prefix);
  }
}
