import chainRegistry from '#chains/chain_registry'
import callbackFormats from '#callbacks/callback_format'
import providers from '#payments/payment_provider'
import notificationChannels from '#notifications/channel_registry'
import rateSources from '#rates/rate_source_registry'
import settings from '#settings/settings_service'
import type {
  GatewayPlugin,
  PluginJob,
  PluginOpenApi,
  PluginRouteContext,
  SeedChain,
} from '#plugin_host/gateway_plugin'
import type { LoadedPlugins } from '#plugin_host/plugin_loader'
import type { SchemaObject } from '#openapi/openapi_types'

/** Every plugin's routes live under this prefix, with the plugin's name. */
export function pluginPrefix(plugin: GatewayPlugin) {
  return `/payments/${plugin.name}/v1`
}

/**
 * The plugins of this process, once activated by providers/plugins_provider.ts:
 * their families, formats, providers and settings are in the core's
 * registries; their routes are mounted by start/routes.ts.
 */
export class PluginRegistry {
  #loaded: LoadedPlugins = { all: [], enabled: [] }
  #plainTextFailures = new Set<string>()

  activate(loaded: LoadedPlugins) {
    this.#loaded = loaded
    for (const plugin of loaded.all) {
      const enabled = loaded.enabled.includes(plugin)
      if (plugin.settings) settings.addDefinitions(plugin.name, plugin.settings, enabled)
      if (!enabled) continue
      for (const family of plugin.families ?? []) chainRegistry.register(family)
      for (const format of plugin.callbackFormats ?? []) callbackFormats.register(format)
      for (const provider of plugin.providers ?? []) providers.register(provider)
      for (const source of plugin.rateSources ?? []) rateSources.register(source)
      for (const channel of plugin.notificationChannels ?? [])
        notificationChannels.register(channel)
    }
  }

  get all() {
    return this.#loaded.all
  }

  get enabled() {
    return this.#loaded.enabled
  }

  /**
   * Every payment_type this gateway knows, served now or by a plugin
   * turned off (`Native`, then each plugin format's own).
   */
  paymentTypes(): string[] {
    const types = new Set<string>()
    for (const name of callbackFormats.names()) types.add(callbackFormats.get(name).paymentType)
    for (const plugin of this.all)
      for (const format of plugin.callbackFormats ?? []) types.add(format.paymentType)
    return [...types]
  }

  /** The enabled plugin that contributes a chain family. */
  pluginOfFamily(family: string): GatewayPlugin | undefined {
    return this.#contributorOf('families', family)
  }

  /** The enabled plugin that contributes a callback format. */
  pluginOfCallbackFormat(name: string): GatewayPlugin | undefined {
    return this.#contributorOf('callbackFormats', name)
  }

  /** The enabled plugin that contributes a payment provider. */
  pluginOfProvider(name: string): GatewayPlugin | undefined {
    return this.#contributorOf('providers', name)
  }

  #contributorOf(
    part: 'families' | 'providers' | 'callbackFormats',
    name: string
  ): GatewayPlugin | undefined {
    return this.enabled.find((plugin) => plugin[part]?.some((entry) => entry.name === name))
  }

  isEnabled(name: string) {
    return this.#loaded.enabled.some((plugin) => plugin.name === name)
  }

  /** Mounts each enabled plugin's routes under its prefix. */
  mountRoutes(context: PluginRouteContext) {
    for (const plugin of this.enabled) {
      if (!plugin.routes) continue
      const prefix = pluginPrefix(plugin)
      context.router.group(() => plugin.routes!.define(context)).prefix(prefix)
      for (const path of plugin.routes.plainTextFailures ?? [])
        this.#plainTextFailures.add(`${prefix}${path}`)
    }
  }

  /** Whether failures at this path answer a plain "fail" (a machine caller). */
  answersPlainText(path: string) {
    return this.#plainTextFailures.has(path)
  }

  seedChains(): SeedChain[] {
    return this.enabled.flatMap((plugin) => plugin.seed?.chains ?? [])
  }

  seedSettings(): [string, string][] {
    return this.enabled.flatMap((plugin) => Object.entries(plugin.seed?.settings ?? {}))
  }

  jobs(): PluginJob[] {
    return this.enabled.flatMap((plugin) => plugin.jobs ?? [])
  }

  /**
   * The public config endpoint's plugin sections, by key, in plugin order:
   * an enabled plugin's answer, else (a plugin turned off) its `whenOff`.
   * A key answered by an enabled plugin wins over one that is off.
   */
  async configSections(): Promise<Record<string, unknown>> {
    const sections: Record<string, unknown> = {}
    const answered = new Set<string>()
    for (const plugin of this.all) {
      const enabled = this.enabled.includes(plugin)
      for (const [key, section] of Object.entries(plugin.configSections ?? {})) {
        if (answered.has(key)) continue
        if (enabled) {
          sections[key] = await section.answer()
          answered.add(key)
        } else if (!(key in sections)) {
          sections[key] = section.whenOff
        }
      }
    }
    return sections
  }

  /** Every config section's schema, by key (known plugins, on or off: the spec's keys are always there). */
  configSectionSchemas(): Record<string, SchemaObject> {
    const schemas: Record<string, SchemaObject> = {}
    for (const plugin of this.all)
      for (const [key, section] of Object.entries(plugin.configSections ?? {}))
        schemas[key] ??= section.schema
    return schemas
  }

  /** What the enabled plugins add to the OpenAPI document. */
  openApiParts(): PluginOpenApi[] {
    return this.enabled.flatMap((plugin) => (plugin.openapi ? [plugin.openapi] : []))
  }
}

const pluginRegistry = new PluginRegistry()
export default pluginRegistry
