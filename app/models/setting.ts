import { BaseModel, column } from '@adonisjs/lucid/orm'
import { epochColumn } from '#models/columns'

/** One stored setting; the typed view lives in SettingsService. */
export default class Setting extends BaseModel {
  static table = 'settings'

  @column({ isPrimary: true })
  declare key: string

  @column()
  declare type: string

  @column()
  declare value: string

  @epochColumn()
  declare updatedAt: number
}
