import settings from '#settings/settings_service'
import assetCatalog from '#services/asset_catalog'
import pluginRegistry from '#plugin_host/plugin_registry'
import { SERVICE_VERSION } from '#support/runtime/version'

/**
 * `data` of the public config endpoint. The cashier page renders from the
 * same object, so the page and any other front-end see the same choices.
 */
export async function publicConfig() {
  const [supportedAssets, site, compat, provider] = await Promise.all([
    assetCatalog.supportedAssets(),
    siteLook(),
    compatDefaults(),
    providerOffer(),
  ])
  return { supported_assets: supportedAssets, site, compat, provider, version: SERVICE_VERSION }
}

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

type CompatSection = { default_token: string; default_currency: string; default_network: string }
type ProviderSection = { enabled: boolean; allow_tokens: string[] }

/**
 * The spec's `compat` and `provider` sections are answered by the plugins
 * that serve them; with that plugin turned off, a neutral value (nothing
 * configured, not enabled).
 */
async function compatDefaults(): Promise<CompatSection> {
  const section = pluginRegistry.configSection('compat')
  return section
    ? ((await section()) as CompatSection)
    : { default_token: '', default_currency: '', default_network: '' }
}

async function providerOffer(): Promise<ProviderSection> {
  const section = pluginRegistry.configSection('provider')
  return section ? ((await section()) as ProviderSection) : { enabled: false, allow_tokens: [] }
}
