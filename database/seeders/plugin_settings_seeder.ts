import settings from '#settings/settings_service'
import pluginRegistry from '#plugin_host/plugin_registry'
import { InstallationSeeder } from '#database/installation_seeder'

/** The installation settings of the enabled plugins (a disabled plugin's are left out). */
export default class PluginSettingsSeeder extends InstallationSeeder {
  async run() {
    for (const [key, value] of pluginRegistry.seedSettings())
      await settings.setIfMissing(key, value)
  }
}
