import { BaseModel, beforeCreate, beforeUpdate } from '@adonisjs/lucid/orm'
import { epochColumn } from '#models/columns'

/**
 * Base of the tables that carry created_at / updated_at as epoch ms.
 */
export class TimestampedRecord extends BaseModel {
  @epochColumn()
  declare createdAt: number

  @epochColumn()
  declare updatedAt: number

  @beforeCreate()
  static stampCreate(record: TimestampedRecord) {
    const now = Date.now()
    record.createdAt ??= now
    record.updatedAt ??= now
  }

  @beforeUpdate()
  static stampUpdate(record: TimestampedRecord) {
    record.updatedAt = Date.now()
  }
}
