import { BaseModel, column } from '@adonisjs/lucid/orm'
import { epochColumn } from '#models/columns'

/** An incoming transfer to one of our wallets that paid no order. */
export default class UnmatchedPayment extends BaseModel {
  static table = 'unmatched_payments'

  @column({ isPrimary: true, consume: (value: unknown) => Number(value) })
  declare id: number

  @column()
  declare network: string

  @column()
  declare reference: string

  @column()
  declare toAddress: string

  @column()
  declare token: string

  /** Decimal string in token units, exactly as transferred. */
  @column()
  declare amount: string

  @epochColumn()
  declare transferTime: number

  @column()
  declare reason: string

  @epochColumn()
  declare detectedAt: number
}
