import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { epochColumn } from '#models/columns'
import { SecretPurpose, revealSecret, sealSecret } from '#support/crypto/secret_box'

export type ApiKeyStatus = 'active' | 'disabled'

/** A merchant's signing key, selected by `pid`. */
export default class ApiKey extends TimestampedRecord {
  static table = 'api_keys'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare pid: string

  /**
   * The secret as stored: encrypted on every write (assigning the plain
   * secret is fine), so reading it gives ciphertext. signingSecret() is
   * the secret itself.
   */
  @column({
    serializeAs: null,
    prepare: (value: string) => sealSecret(value, SecretPurpose.apiKeySecret),
  })
  declare secretKey: string

  @column()
  declare status: ApiKeyStatus

  /** Comma-separated IPs or CIDR ranges; empty = any address. */
  @column()
  declare ipAllowlist: string

  @column()
  declare note: string

  @epochColumn()
  declare lastUsedAt: number | null

  /** The plain secret, decrypted for signing or checking a signature. */
  signingSecret(): string {
    return revealSecret(this.secretKey, SecretPurpose.apiKeySecret)
  }

  get isActive() {
    return this.status === 'active'
  }

  get allowedIps(): string[] {
    return this.ipAllowlist
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== '')
  }
}
