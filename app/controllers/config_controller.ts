import type { HttpContext } from '@adonisjs/core/http'
import settings from '#settings/settings_service'
import pluginRegistry from '#app_plugins/plugin_registry'
import assetCatalog from '#services/asset_catalog'
import { ok } from '#support/envelope'
import { SERVICE_VERSION } from '#support/version'

export default class ConfigController {
  /** GET /payments/native/v1/config */
  async show(ctx: HttpContext) {
    const [supportedAssets, site, compat, provider] = await Promise.all([
      assetCatalog.supportedAssets(),
      this.#site(),
      this.#section('compat', { default_token: '', default_currency: '', default_network: '' }),
      this.#section('provider', { enabled: false, allow_tokens: [] }),
    ])
    return ok(ctx, {
      supported_assets: supportedAssets,
      site,
      compat,
      provider,
      version: SERVICE_VERSION,
    })
  }

  async #site() {
    return {
      cashier_name: await settings.get('site.cashier_name'),
      logo_url: await settings.get('site.logo_url'),
      website_title: await settings.get('site.website_title'),
      support_link: await settings.get('site.support_link'),
      background_color: await settings.get('site.background_color'),
      background_image_url: await settings.get('site.background_image_url'),
    }
  }

  /**
   * A section the spec names, answered by the plugin that serves it; when
   * that plugin is off, its neutral value (nothing configured, not enabled).
   */
  async #section(name: string, fallback: unknown) {
    const section = pluginRegistry.configSection(name)
    return section ? section() : fallback
  }
}
