import type { PluginModule } from '#plugin_host/gateway_plugin'

/**
 * The plugins this gateway is built with, each on by default. The PLUGINS
 * env turns some off without code changes (`PLUGINS=evm,tron` keeps only
 * those, `PLUGINS=-ton,-provider` removes those); PLUGIN_MODULES adds
 * plugins from other modules (a path from the app root or an npm package).
 */
const pluginsConfig: Record<string, () => Promise<PluginModule>> = {
  tron: () => import('#plugins/tron/plugin'),
  evm: () => import('#plugins/evm/plugin'),
  solana: () => import('#plugins/solana/plugin'),
  ton: () => import('#plugins/ton/plugin'),
  provider: () => import('#plugins/provider/plugin'),
  compat: () => import('#plugins/compat/plugin'),
  telegram: () => import('#plugins/telegram/plugin'),
  email: () => import('#plugins/email/plugin'),
  webhook: () => import('#plugins/webhook/plugin'),
  rate_coingecko: () => import('#plugins/rate_coingecko/plugin'),
  rate_binance: () => import('#plugins/rate_binance/plugin'),
  rate_okx: () => import('#plugins/rate_okx/plugin'),
  rate_coinbase: () => import('#plugins/rate_coinbase/plugin'),
  rate_kraken: () => import('#plugins/rate_kraken/plugin'),
  rate_frankfurter: () => import('#plugins/rate_frankfurter/plugin'),
  rate_json: () => import('#plugins/rate_json/plugin'),
}

export default pluginsConfig
