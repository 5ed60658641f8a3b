import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { booleanColumn } from '#models/columns'

/** A receiving address of the merchant on a network. */
export default class Wallet extends TimestampedRecord {
  static table = 'wallets'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare network: string

  @column()
  declare address: string

  @booleanColumn()
  declare enabled: boolean

  @column()
  declare note: string
}
