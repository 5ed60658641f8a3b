import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { booleanColumn, integerColumn } from '#models/columns'

/** A payable asset on a network: a token contract or the native coin. */
export default class Token extends TimestampedRecord {
  static table = 'tokens'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare network: string

  /** Upper-case symbol (USDT, USDC, TRX ...). */
  @column()
  declare symbol: string

  /** Token contract (or mint, or master) address; null for the native coin. */
  @column()
  declare contract: string | null

  @integerColumn()
  declare decimals: number

  /** Fraction digits of payable amounts (2–6): also the unique-amount step. */
  @integerColumn()
  declare amountPrecision: number

  @booleanColumn()
  declare enabled: boolean

  get isNative() {
    return this.contract === null
  }
}
