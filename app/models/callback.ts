import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { epochColumn, integerColumn } from '#models/columns'

export type CallbackStatus = 'pending' | 'delivered' | 'failed'

/** A merchant callback in the outbox (one per paid order). */
export default class Callback extends TimestampedRecord {
  static table = 'callbacks'

  @column({ isPrimary: true, consume: (value: unknown) => Number(value) })
  declare id: number

  @column({ consume: (value: unknown) => Number(value) })
  declare orderId: number

  /** Name of the callback format (native, or a plugin format's). */
  @column()
  declare format: string

  @column()
  declare status: CallbackStatus

  @integerColumn()
  declare attempts: number

  @epochColumn()
  declare nextAttemptAt: number

  @column()
  declare lockedBy: string | null

  @epochColumn()
  declare lockedUntil: number | null

  @integerColumn()
  declare lastHttpStatus: number | null

  @column()
  declare lastError: string

  @epochColumn()
  declare deliveredAt: number | null
}
