import { fileURLToPath, pathToFileURL } from 'node:url'
import { resolve } from 'node:path'
import pluginsConfig from '#config/plugins'
import type { GatewayPlugin, PluginModule } from '#plugin_host/gateway_plugin'
import { PluginConfigurationError, selectPlugins } from '#plugin_host/plugin_selection'

export type LoadedPlugins = {
  /** Every plugin known to this build, on or off, in configuration order. */
  all: GatewayPlugin[]
  enabled: GatewayPlugin[]
}

/** The application root (this file is app/plugin_host/plugin_loader.ts). */
const APP_ROOT = fileURLToPath(new URL('../../', import.meta.url))

const NAME = /^[a-z][a-z0-9_-]{0,31}$/

/**
 * Imports the plugins of config/plugins.ts and of PLUGIN_MODULES and picks
 * the enabled ones (PLUGINS). Read from process.env because ace loads
 * plugin commands before the app (and its env validation) boots.
 * Loaded once per process.
 */
let loading: Promise<LoadedPlugins> | null = null

export function loadPlugins(): Promise<LoadedPlugins> {
  loading ??= load()
  return loading
}

async function load(): Promise<LoadedPlugins> {
  const modules: { source: string; load: () => Promise<PluginModule> }[] = Object.entries(
    pluginsConfig
  ).map(([name, loader]) => ({ source: `config/plugins.ts (${name})`, load: loader }))
  for (const specifier of extraModules(process.env.PLUGIN_MODULES)) {
    modules.push({ source: `PLUGIN_MODULES (${specifier})`, load: () => importModule(specifier) })
  }

  const all: GatewayPlugin[] = []
  for (const module of modules) {
    let plugin: GatewayPlugin | undefined
    try {
      const loaded = await module.load()
      plugin = loaded.default
    } catch (error) {
      throw new PluginConfigurationError(
        `Cannot load the plugin of ${module.source}: ${(error as Error).message}`
      )
    }
    if (!plugin || typeof plugin.name !== 'string' || !NAME.test(plugin.name)) {
      throw new PluginConfigurationError(
        `${module.source} does not export a plugin with a valid name (default export of definePlugin)`
      )
    }
    if (all.some((other) => other.name === plugin.name)) {
      throw new PluginConfigurationError(
        `Two plugins are named "${plugin.name}" (${module.source})`
      )
    }
    all.push(plugin)
  }

  const on = selectPlugins(
    all.map((plugin) => plugin.name),
    process.env.PLUGINS
  )
  return { all, enabled: all.filter((plugin) => on.has(plugin.name)) }
}

function extraModules(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
}

/** A path (./ or /) is taken from the app root; anything else is a package name. */
function importModule(specifier: string): Promise<PluginModule> {
  if (specifier.startsWith('.') || specifier.startsWith('/')) {
    return import(pathToFileURL(resolve(APP_ROOT, specifier)).href)
  }
  return import(specifier)
}
