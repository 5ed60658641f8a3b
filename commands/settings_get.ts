import { args } from '@adonisjs/core/ace'
import { OperatorCommand } from '#support/cli/operator_command'

export default class SettingsGet extends OperatorCommand {
  static commandName = 'settings:get'
  static description = 'Show one setting, or all of them with their defaults'

  @args.string({ description: 'Setting key (omit to list all)', required: false })
  declare key?: string

  async execute() {
    const { default: settings } = await import('#settings/settings_service')
    const rows = await settings.list()
    const show = (row: (typeof rows)[number]) =>
      row.secret && row.value !== '' ? '********' : JSON.stringify(row.value)

    if (this.key) {
      settings.definition(this.key) // throws "unknown setting"
      const row = rows.find((entry) => entry.key === this.key)!
      this.logger.log(show(row))
      return
    }
    this.printTable(
      ['key', 'value', 'source', 'description'],
      rows.map((row) => [row.key, show(row), row.stored ? 'set' : 'default', row.description])
    )
  }
}
