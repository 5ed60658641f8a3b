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

  /** Which transfer of the transaction (payment_references.position); '' when unknown. */
  @column()
  declare position: string

  /** transfer | unreadable | unexplained | reorged (payment_matcher.ts). */
  @column()
  declare kind: string

  /** The (paid) order a `reorged` row is about. */
  @column({
    consume: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
  })
  declare orderId: number | null

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

  /** The order it was assigned to by an operator (paid through the payment path). */
  @column({
    consume: (value: unknown) => (value === null || value === undefined ? null : Number(value)),
  })
  declare assignedOrderId: number | null

  @epochColumn()
  declare assignedAt: number | null

  @column()
  declare assignedBy: string | null

  @epochColumn()
  declare dismissedAt: number | null

  @column()
  declare dismissedBy: string | null

  @column()
  declare dismissNote: string | null

  /** Still waiting for an operator: neither assigned nor dismissed. */
  get isOpen() {
    return this.assignedAt === null && this.dismissedAt === null
  }
}
