import { OperatorCommand } from '#support/cli/operator_command'
import type { PluginDescription } from '#plugin_host/plugin_catalog'

export default class PluginsList extends OperatorCommand {
  static commandName = 'plugins:list'
  static description = 'List the plugins, whether each is on (PLUGINS env), and what it contributes'

  async execute() {
    const { pluginCatalog } = await import('#plugin_host/plugin_catalog')
    const catalog = await pluginCatalog()
    this.printTable(
      ['plugin', 'on', 'description', 'contributes'],
      catalog.plugins.map((plugin) => [
        plugin.name,
        plugin.enabled ? 'yes' : 'no',
        plugin.description,
        this.#parts(plugin),
      ])
    )
  }

  #parts(plugin: PluginDescription) {
    const parts: string[] = []
    const list = (label: string, names: string[]) => {
      if (names.length > 0) parts.push(`${label}: ${names.join(', ')}`)
    }
    list(
      'families',
      plugin.families.map((family) => family.name)
    )
    list('callback formats', plugin.callbackFormats)
    list('providers', plugin.providers)
    list('notification channels', plugin.notificationChannels)
    if (plugin.routePrefix) parts.push(`routes: ${plugin.routePrefix}/*`)
    list(
      'settings',
      plugin.settings.map((setting) => setting.key)
    )
    list('seed chains', plugin.seedNetworks)
    list(
      'commands',
      plugin.commands.map((command) => command.name)
    )
    list(
      'jobs',
      plugin.jobs.map((job) => job.name)
    )
    return parts.join('; ')
  }
}
