import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Edge } from 'edge.js'
import app from '@adonisjs/core/services/app'
import { configProvider } from '@adonisjs/core'
import { loaders } from '@adonisjs/i18n'
import type {
  I18nManagerConfig,
  LoaderFactory,
  TranslationsLoaderContract,
} from '@adonisjs/i18n/types'
import pluginRegistry from '#plugin_host/plugin_registry'
import type { GatewayPlugin } from '#plugin_host/gateway_plugin'

/**
 * What a plugin brings besides code, from its `folder`:
 * - `lang/<locale>/<file>.json`: its texts (on or off), keyed `plugins.<name>.<file>.<key>`
 *   (e.g. a family plugin's lang/en/admin.json `api_key_help` is
 *   `plugins.<name>.admin.api_key_help`), in the one i18n catalogue;
 * - `views/`: its Edge views and partials, mounted as the disk `<name>`
 *   (a flavour plugin's `<name>::admin/integration`).
 */

/** The key prefix of a plugin's texts. */
export function pluginKeyPrefix(plugin: Pick<GatewayPlugin, 'name'>): string {
  return `plugins.${plugin.name}.`
}

function folderOf(plugin: GatewayPlugin, sub: string): string | null {
  if (!plugin.folder) return null
  const path = fileURLToPath(new URL(sub, plugin.folder))
  return existsSync(path) ? path : null
}

/**
 * Loads every plugin's `lang/` folder, each key under its plugin's prefix:
 * a plugin turned off keeps its texts (the console names its settings page
 * and says that it is off, in the admin's language).
 */
export class PluginTranslationsLoader implements TranslationsLoaderContract {
  constructor(protected config: I18nManagerConfig) {}

  async load() {
    const merged: Record<string, Record<string, string>> = {}
    for (const plugin of pluginRegistry.all) {
      const location = folderOf(plugin, 'lang/')
      if (!location) continue
      const prefix = pluginKeyPrefix(plugin)
      // The package's own file loader (JSON or YAML, nested keys flattened).
      const factory = await configProvider.resolve<LoaderFactory>(app, loaders.fs({ location }))
      const byLocale = await factory!(this.config).load()
      for (const [locale, messages] of Object.entries(byLocale)) {
        const target = (merged[locale] ??= {})
        for (const [key, text] of Object.entries(messages)) target[`${prefix}${key}`] = text
      }
    }
    return merged
  }
}

/** The i18n loader factory of config/i18n.ts. */
export const pluginTranslations: LoaderFactory = (config) => new PluginTranslationsLoader(config)

/** Mounts each enabled plugin's `views/` folder as the Edge disk named after it. */
export function mountPluginViews(edge: Edge) {
  for (const plugin of pluginRegistry.enabled) {
    const location = folderOf(plugin, 'views/')
    if (location) edge.mount(plugin.name, location)
  }
}
