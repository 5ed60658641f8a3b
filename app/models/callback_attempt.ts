import { BaseModel, column } from '@adonisjs/lucid/orm'
import { booleanColumn, epochColumn, integerColumn } from '#models/columns'

/** One delivery attempt of a merchant callback. */
export default class CallbackAttempt extends BaseModel {
  static table = 'callback_attempts'

  @column({ isPrimary: true, consume: (value: unknown) => Number(value) })
  declare id: number

  @column({ consume: (value: unknown) => Number(value) })
  declare callbackId: number

  @integerColumn()
  declare attempt: number

  @epochColumn()
  declare startedAt: number

  @column()
  declare method: string

  @column()
  declare url: string

  @integerColumn()
  declare httpStatus: number | null

  @column()
  declare responseExcerpt: string

  @column()
  declare error: string

  @integerColumn()
  declare durationMs: number

  @booleanColumn()
  declare acknowledged: boolean
}
