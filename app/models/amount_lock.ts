import { BaseModel, column } from '@adonisjs/lucid/orm'
import { decimalColumn, epochColumn } from '#models/columns'

/**
 * Reservation of (network, address, token, amount) for one waiting order.
 * The row exists only while the reservation is active.
 */
export default class AmountLock extends BaseModel {
  static table = 'amount_locks'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare network: string

  @column()
  declare address: string

  @column()
  declare token: string

  @decimalColumn()
  declare amount: string

  @column({ consume: (value: unknown) => Number(value) })
  declare orderId: number

  @epochColumn()
  declare expiresAt: number

  @epochColumn()
  declare createdAt: number
}
