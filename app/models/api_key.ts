import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { epochColumn } from '#models/columns'

export type ApiKeyStatus = 'active' | 'disabled'

/** A merchant's signing key, selected by `pid`. */
export default class ApiKey extends TimestampedRecord {
  static table = 'api_keys'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare pid: string

  @column({ serializeAs: null })
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
