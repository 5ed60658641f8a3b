import type { HttpContext } from '@adonisjs/core/http'
import router from '@adonisjs/core/services/router'
import { listedRoutes, pluginCatalog } from '#app_plugins/plugin_catalog'

/** Which plugins are loaded (PLUGINS) and what each brings: the same catalog as `plugins:list`. */
export default class PluginsController {
  async index({ view }: HttpContext) {
    const catalog = await pluginCatalog({ routes: listedRoutes(router.toJSON()) })
    return view.render('console/chains/plugins', { catalog })
  }
}
