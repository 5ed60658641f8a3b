import settings from '#settings/settings_service'
import assetCatalog from '#services/asset_catalog'
import pluginRegistry from '#plugin_host/plugin_registry'
import { SERVICE_VERSION } from '#support/runtime/version'

/**
 * `data` of the public config endpoint. The cashier page renders from the
 * same object, so the page and any other front-end see the same choices.
 */
export async function publicConfig() {
  const [supportedAssets, site, sections] = await Promise.all([
    assetCatalog.supportedAssets(),
    siteLook(),
    pluginRegistry.configSections(),
  ])
  return {
    supported_assets: supportedAssets,
    site,
    ...(sections as PluginSections),
    version: SERVICE_VERSION,
  }
}

/**
 * The sections the plugins answer (the interface spec names two, each
 * answered by the plugin serving it, or its neutral value while that plugin
 * is off): typed loosely, the core reads none of them.
 */
type PluginSections = Record<string, unknown>

export type PublicConfig = Awaited<ReturnType<typeof publicConfig>>

async function siteLook() {
  return {
    cashier_name: await settings.get('site.cashier_name'),
    logo_url: await settings.get('site.logo_url'),
    website_title: await settings.get('site.website_title'),
    support_link: await settings.get('site.support_link'),
    background_color: await settings.get('site.background_color'),
    background_image_url: await settings.get('site.background_image_url'),
  }
}
