import encryption from '@adonisjs/core/services/encryption'

/**
 * Secrets kept in the database (merchant API secrets, RPC API keys, the
 * provider shop token) are stored encrypted with the app's encryption
 * service (AES-256-GCM, APP_KEY) and decrypted only where they are used.
 *
 * Each kind of secret has its own purpose, bound into the ciphertext: a
 * value copied from one column to another does not decrypt there.
 */
export const SecretPurpose = {
  apiKeySecret: 'api_keys.secret_key',
  chainApiKey: 'chains.api_key',
  setting: (key: string) => `settings.${key}`,
  totpSecret: 'users.totp_secret',
} as const

/**
 * The shape of what the encryption service writes (config/encryption.ts,
 * id `app`, AES-256-GCM v1): `app.v1:<ciphertext>.<12-byte iv>.<16-byte
 * tag>`, base64url. A stored value of that shape is ciphertext; anything
 * else is a plain value left from before encryption at rest.
 */
const SEALED = /^app\.v1:[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}$/

/** A stored secret that no known key decrypts (APP_KEY changed?). */
export class SecretUnreadableError extends Error {}

export function looksSealed(value: string): boolean {
  return SEALED.test(value)
}

/**
 * Encrypts a secret for storage. Idempotent: a value already encrypted for
 * this purpose is returned as is, so writing it back never encrypts twice.
 * The empty string (no secret) stays empty.
 */
export function sealSecret(plain: string, purpose: string): string {
  if (plain === '') return ''
  if (looksSealed(plain)) {
    if (encryption.decrypt<string>(plain, purpose) !== null) return plain
    throw new SecretUnreadableError(
      `a value shaped like an encrypted ${purpose} cannot be stored: it is not one of ours`
    )
  }
  return encryption.encrypt(plain, { purpose })
}

/**
 * The secret itself, for the one place that needs it (checking or making a
 * signature, an RPC or provider call). A plain stored value (a database not
 * yet migrated) is returned as it is.
 */
export function revealSecret(stored: string, purpose: string): string {
  if (stored === '' || !looksSealed(stored)) return stored
  const plain = encryption.decrypt<string>(stored, purpose)
  if (typeof plain !== 'string') {
    throw new SecretUnreadableError(
      `cannot decrypt ${purpose}: it was encrypted with another APP_KEY (list the old key in APP_KEY_PREVIOUS)`
    )
  }
  return plain
}

/** True when the current APP_KEY alone decrypts `stored` (secrets:reencrypt). */
export function sealedWithCurrentKey(stored: string, purpose: string): boolean {
  return looksSealed(stored) && encryption.use('current').decrypt<string>(stored, purpose) !== null
}
