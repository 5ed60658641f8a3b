import settings from '#settings/settings_service'
import assetCatalog from '#services/asset_catalog'
import { SERVICE_VERSION } from '#support/version'

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

async function compatDefaults() {
  return {
    default_token: await settings.get('compat.default_token'),
    default_currency: await settings.get('compat.default_currency'),
    default_network: await settings.get('compat.default_network'),
  }
}

async function providerOffer() {
  return {
    enabled: await settings.get('provider.enabled'),
    allow_tokens: await settings.get('provider.allow_tokens'),
  }
}
