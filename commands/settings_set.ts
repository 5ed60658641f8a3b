import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class SettingsSet extends OperatorCommand {
  static commandName = 'settings:set'
  static description = 'Change a setting (running processes see it within 2 seconds)'

  @args.string({ description: 'Setting key, e.g. order.expiration_minutes' })
  declare key: string

  // allowEmptyValue: `""` is a value (it empties a text setting), not a
  // missing argument; an omitted value is still refused by ace.
  @args.string({ description: 'New value ("" to empty a text setting)', allowEmptyValue: true })
  declare value: string

  async execute() {
    const { default: settings } = await import('#settings/settings_service')
    const value = await settings.set(this.key, this.value)
    const shown = settings.definition(this.key).secret ? '(secret)' : JSON.stringify(value)
    this.logger.success(`${this.key} = ${shown}`)
  }
}
