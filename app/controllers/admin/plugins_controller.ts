import { textOr } from '#support/text/catalogue'
import type { HttpContext } from '@adonisjs/core/http'
import type { I18n } from '@adonisjs/i18n'
import router from '@adonisjs/core/services/router'
import { listedRoutes, pluginCatalog } from '#plugin_host/plugin_catalog'
import { pluginKeyPrefix } from '#plugin_host/plugin_resources'

/** A text of a plugin (`plugins.<name>.<file>.<key>`) in the admin's language, or null when it brings none. */
function pluginText(i18n: I18n, plugin: string, key: string): string | null {
  const full = `${pluginKeyPrefix({ name: plugin })}${key}`
  return textOr(i18n, full, null)
}

/**
 * Which plugins are loaded (PLUGINS) and what each brings: the same catalog as `plugins:list`.
 * A plugin's own words replace its definition's English where it brings them:
 * `admin.description`, `admin.families.<family>.address_format`, and its
 * settings' help (`settings.field.<key with underscores>.help`, as its settings page shows).
 */
export default class PluginsController {
  async index({ view, i18n }: HttpContext) {
    const catalog = await pluginCatalog({ routes: listedRoutes(router.toJSON()) })
    return view.render('admin/chains/plugins', {
      catalog: {
        ...catalog,
        plugins: catalog.plugins.map((plugin) => ({
          ...plugin,
          description: pluginText(i18n, plugin.name, 'admin.description') ?? plugin.description,
          families: plugin.families.map((family) => ({
            ...family,
            addressFormat:
              pluginText(i18n, plugin.name, `admin.families.${family.name}.address_format`) ??
              family.addressFormat,
          })),
          settings: plugin.settings.map((setting) => ({
            ...setting,
            description:
              pluginText(
                i18n,
                plugin.name,
                `settings.field.${setting.key.replace(/\./g, '_')}.help`
              ) ?? setting.description,
          })),
        })),
      },
    })
  }
}
