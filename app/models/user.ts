import hash from '@adonisjs/core/services/hash'
import { compose } from '@adonisjs/core/helpers'
import { column } from '@adonisjs/lucid/orm'
import { withAuthFinder } from '@adonisjs/auth/mixins/lucid'
import { TimestampedRecord } from '#models/base_record'
import { epochColumn } from '#models/columns'

const AuthFinder = withAuthFinder(() => hash.use('scrypt'), {
  uids: ['email'],
  passwordColumnName: 'password',
})

export const ADMIN_ROLES = ['admin', 'viewer'] as const
export type AdminRole = (typeof ADMIN_ROLES)[number]

/** An administrator of the console (app/services/operators/admin_users.ts manages them). */
export default class User extends compose(TimestampedRecord, AuthFinder) {
  static table = 'users'

  @column({ isPrimary: true })
  declare id: number

  /** Always lower-case (unique on lower(email)). */
  @column()
  declare email: string

  @column({ serializeAs: null })
  declare password: string

  @column()
  declare role: AdminRole

  /** Sealed (SecretPurpose.totpSecret); null while 2FA is off. */
  @column({ serializeAs: null })
  declare totpSecret: string | null

  @epochColumn()
  declare totpEnabledAt: number | null

  @epochColumn()
  declare totpLastStep: number | null

  /** JSON array of hashes of the unused recovery codes. */
  @column({ serializeAs: null })
  declare recoveryCodes: string | null

  @epochColumn()
  declare passwordChangedAt: number | null

  @epochColumn()
  declare lastLoginAt: number | null

  /** Set while the account is disabled: no sign-in, its sessions end. */
  @epochColumn()
  declare disabledAt: number | null

  /** The console language this admin chose (`en`, `zh-CN`); null: the browser's. */
  @column()
  declare locale: string | null
}
