import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { coingeckoSource } from '#plugins/rate_coingecko/coingecko_source'

export default definePlugin({
  name: 'rate_coingecko',
  description: 'Exchange rates from CoinGecko (simple price; optional Demo or Pro API key)',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: {
    group: 'rates',
    labels: {
      'rate.coingecko.url': 'CoinGecko base URL',
      'rate.coingecko.api_key': 'CoinGecko API key',
    },
  },
  rateSources: [coingeckoSource],
  settings: rateSourceSettings(coingeckoSource, {
    apiKey: true,
    apiKeyHint: 'a Demo key; a Pro key needs rate.coingecko.url = https://pro-api.coingecko.com',
  }),
})
