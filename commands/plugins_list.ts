import { OperatorCommand } from '#support/operator_command'

export default class PluginsList extends OperatorCommand {
  static commandName = 'plugins:list'
  static description = 'List the plugins, whether each is on (PLUGINS env), and what it contributes'

  async execute() {
    const { default: pluginRegistry, pluginPrefix } = await import('#app_plugins/plugin_registry')
    this.printTable(
      ['plugin', 'on', 'description', 'contributes'],
      pluginRegistry.all.map((plugin) => {
        const parts: string[] = []
        const list = (label: string, names: string[]) => {
          if (names.length > 0) parts.push(`${label}: ${names.join(', ')}`)
        }
        list('families', (plugin.families ?? []).map((family) => family.name))
        list('callback formats', (plugin.callbackFormats ?? []).map((format) => format.name))
        list('providers', (plugin.providers ?? []).map((provider) => provider.name))
        if (plugin.routes) parts.push(`routes: ${pluginPrefix(plugin)}/*`)
        list('settings', Object.keys(plugin.settings ?? {}))
        list('seed chains', (plugin.seed?.chains ?? []).map((chain) => chain.network))
        list('commands', (plugin.commands ?? []).map((command) => command.commandName))
        list('jobs', (plugin.jobs ?? []).map((job) => job.name))
        return [plugin.name, pluginRegistry.isEnabled(plugin.name) ? 'yes' : 'no', plugin.description, parts.join('; ')]
      })
    )
  }
}
