import { BaseModel, column } from '@adonisjs/lucid/orm'
import { epochColumn, integerColumn } from '#models/columns'

/**
 * A transfer the scanner saw for an order, not yet deep enough to pay it
 * (written by payment_sightings.ts, read by the payer's progress endpoint).
 */
export default class PaymentSighting extends BaseModel {
  static table = 'payment_sightings'

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

  @integerColumn()
  declare orderId: number

  /** Depth when last seen, on the family's scale (see ObservedTransfer.confirmations). */
  @integerColumn()
  declare confirmations: number

  @epochColumn()
  declare transferTime: number

  @epochColumn()
  declare seenAt: number

  @epochColumn()
  declare lastSeenAt: number
}
