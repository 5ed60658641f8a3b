import { column } from '@adonisjs/lucid/orm'
import { TimestampedRecord } from '#models/base_record'
import { decimalColumn } from '#models/columns'

/** A fixed exchange rate: 1 `token` = `rate` `fiat`. */
export default class Rate extends TimestampedRecord {
  static table = 'rates'

  @column({ isPrimary: true })
  declare id: number

  @column()
  declare token: string

  @column()
  declare fiat: string

  @decimalColumn()
  declare rate: string

  @column()
  declare source: string
}
