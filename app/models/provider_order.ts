import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { decimalColumn, epochColumn } from '#models/columns'

export type ProviderOrderStatus = 'creating' | 'pending' | 'paid' | 'failed' | 'expired'

/** A payment handed to the hosted provider. */
export default class ProviderOrder extends TimestampedRecord {
  static table = 'provider_orders'

  @column({ isPrimary: true, consume: (value: unknown) => Number(value) })
  declare id: number

  @column()
  declare provider: string

  /** Our trade_id, sent to the provider as unique_id. */
  @column()
  declare uniqueId: string

  @column({ consume: (value: unknown) => (value === null ? null : Number(value)) })
  declare orderId: number | null

  @column()
  declare providerOrderId: string

  @column()
  declare status: ProviderOrderStatus

  @column()
  declare coin: string

  @decimalColumn()
  declare amount: string

  @column()
  declare payUrl: string

  @column()
  declare error: string

  @column()
  declare responseRaw: string

  @column()
  declare notifyRaw: string

  @epochColumn()
  declare notifiedAt: number | null

  /** How often the reconciliation job asked the provider about it. */
  @column()
  declare reconcileAttempts: number

  /** When the reconciliation job may ask next (epoch ms). */
  @epochColumn()
  declare reconcileNextAt: number | null
}
