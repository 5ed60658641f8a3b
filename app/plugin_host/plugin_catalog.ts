import Chain from '#models/chain'
import pluginRegistry, { pluginPrefix, type PluginRegistry } from '#plugin_host/plugin_registry'
import type { GatewayPlugin } from '#plugin_host/gateway_plugin'

/** A route as the router lists it once committed (the web process). */
export type ListedRoute = { pattern: string; methods: string[] }

export type FamilyDescription = {
  name: string
  addressFormat: string
  /** Configured networks of this family (chains table). */
  networks: string[]
  canScan: boolean
  canVerify: boolean
  canTestConnection: boolean
  paymentUris: boolean
}

/** What one plugin is and brings, for the console's plugins page and `plugins:list`. */
export type PluginDescription = {
  name: string
  description: string
  enabled: boolean
  families: FamilyDescription[]
  /** Networks `node ace setup` installs with the plugin. */
  seedNetworks: string[]
  callbackFormats: string[]
  notificationChannels: string[]
  providers: string[]
  /** Prefix of its routes; null when it brings none. */
  routePrefix: string | null
  /** Its routes as mounted (only known where the router was committed: the web process; only when enabled). */
  routes: ListedRoute[]
  commands: { name: string; description: string }[]
  settings: { key: string; description: string; secret: boolean }[]
  jobs: { name: string; everySeconds: number }[]
  /** Sections of the public config endpoint it answers. */
  configSections: string[]
}

export type PluginCatalog = {
  /** The PLUGINS value this process started with ('' keeps every plugin). */
  selection: string
  /** PLUGIN_MODULES: plugins loaded from outside config/plugins.ts. */
  extraModules: string
  plugins: PluginDescription[]
}

function describe(
  plugin: GatewayPlugin,
  enabled: boolean,
  chains: Chain[],
  routes: ListedRoute[]
): PluginDescription {
  const prefix = plugin.routes ? pluginPrefix(plugin) : null
  return {
    name: plugin.name,
    description: plugin.description,
    enabled,
    families: (plugin.families ?? []).map((family) => ({
      name: family.name,
      addressFormat: family.addressFormat,
      networks: chains
        .filter((chain) => chain.family === family.name)
        .map((chain) => chain.network),
      canScan: typeof family.scan === 'function',
      canVerify: typeof family.verifyReference === 'function',
      canTestConnection: typeof family.head === 'function',
      paymentUris: typeof family.paymentUri === 'function',
    })),
    seedNetworks: (plugin.seed?.chains ?? []).map((chain) => chain.network),
    callbackFormats: (plugin.callbackFormats ?? []).map((format) => format.name),
    notificationChannels: (plugin.notificationChannels ?? []).map((channel) => channel.name),
    providers: (plugin.providers ?? []).map((provider) => provider.name),
    routePrefix: prefix,
    routes:
      prefix && enabled
        ? routes.filter(
            (route) => route.pattern === prefix || route.pattern.startsWith(`${prefix}/`)
          )
        : [],
    commands: (plugin.commands ?? []).map((command) => ({
      name: command.commandName,
      description: command.description,
    })),
    settings: Object.entries(plugin.settings ?? {}).map(([key, definition]) => ({
      key,
      description: definition.description,
      secret: definition.secret === true,
    })),
    jobs: (plugin.jobs ?? []).map((job) => ({ name: job.name, everySeconds: job.everySeconds })),
    configSections: Object.keys(plugin.configSections ?? {}),
  }
}

/**
 * Every plugin this build knows, on or off (PLUGINS), and what each brings:
 * families with their configured networks, routes, commands, settings,
 * jobs. `routes` is the router's list (router.toJSON()) where it is known.
 */
export async function pluginCatalog(
  options: { routes?: ListedRoute[]; registry?: PluginRegistry } = {}
): Promise<PluginCatalog> {
  const registry = options.registry ?? pluginRegistry
  const chains = await Chain.query().orderBy('sort_order').orderBy('id')
  return {
    selection: process.env.PLUGINS ?? '',
    extraModules: process.env.PLUGIN_MODULES ?? '',
    plugins: registry.all.map((plugin) =>
      describe(plugin, registry.isEnabled(plugin.name), chains, options.routes ?? [])
    ),
  }
}

/** The router's routes as a flat list (every domain). */
export function listedRoutes(
  byDomain: Record<string, { pattern: string; methods: string[] }[]>
): ListedRoute[] {
  return Object.values(byDomain)
    .flat()
    .map((route) => ({
      pattern: route.pattern,
      methods: route.methods.filter((method) => method !== 'HEAD'),
    }))
}
