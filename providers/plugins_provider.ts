import type { ApplicationService } from '@adonisjs/core/types'
import callbackFormats from '#callbacks/callback_format'
import { NativeCallbackFormat } from '#callbacks/native_callback_format'
import { loadPlugins } from '#plugin_host/plugin_loader'
import pluginRegistry from '#plugin_host/plugin_registry'
import { mountPluginViews } from '#plugin_host/plugin_resources'

/**
 * Loads the plugins of config/plugins.ts (and PLUGIN_MODULES), keeps the
 * enabled ones (PLUGINS) and registers what they contribute into the
 * core's registries. Routes are mounted by start/routes.ts.
 */
export default class PluginsProvider {
  constructor(protected app: ApplicationService) {}

  /** In boot(), which the application awaits (register() is not awaited). */
  async boot() {
    callbackFormats.register(new NativeCallbackFormat())
    pluginRegistry.activate(await loadPlugins())
    // Their views as Edge disks; their texts are read by the i18n provider, booted after this one.
    if (this.app.usingEdgeJS) {
      const { default: edge } = await import('edge.js')
      mountPluginViews(edge)
    }
  }
}
