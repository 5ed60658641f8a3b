import { ListLoader } from '@adonisjs/core/ace'
import { loadPlugins } from '#plugin_host/plugin_loader'

/**
 * Ace commands loader (adonisrc.ts `commands`): the enabled plugins' ace
 * commands. Ace reads it before the app boots, so the plugins are loaded
 * here from the configuration directly.
 */
let loader: Promise<ListLoader<any>> | null = null

function commands() {
  loader ??= loadPlugins().then(
    ({ enabled }) => new ListLoader(enabled.flatMap((plugin) => plugin.commands ?? []))
  )
  return loader
}

export async function getMetaData() {
  const loaded = await commands()
  return loaded.getMetaData()
}

export async function getCommand(metaData: Parameters<ListLoader<any>['getCommand']>[0]) {
  const loaded = await commands()
  return loaded.getCommand(metaData)
}
