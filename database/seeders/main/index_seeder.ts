import { InstallationSeeder, type InstallationSeederClass } from '#database/installation_seeder'
import ApiKeySeeder from '#database/seeders/api_key_seeder'
import PluginSettingsSeeder from '#database/seeders/plugin_settings_seeder'
import PluginChainsSeeder from '#database/seeders/plugin_chains_seeder'
import AdminSeeder from '#database/seeders/admin_seeder'

/** Run in this order; a new installation default is one more seeder here. */
export const INSTALLATION_SEEDERS: InstallationSeederClass[] = [
  ApiKeySeeder,
  PluginSettingsSeeder,
  PluginChainsSeeder,
  AdminSeeder,
]

/**
 * The one seeder `node ace db:seed` runs (config/database.ts points it at
 * this folder) and the one `setup` and every start run: the installation
 * defaults, in order. Idempotent (see InstallationSeeder).
 */
export default class IndexSeeder extends InstallationSeeder {
  async run() {
    for (const Seeder of INSTALLATION_SEEDERS) await new Seeder(this.client, this.print).run()
  }
}
