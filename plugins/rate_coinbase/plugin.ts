import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { coinbaseSource } from '#plugins/rate_coinbase/coinbase_source'

export default definePlugin({
  name: 'rate_coinbase',
  description: 'Exchange rates from Coinbase (public exchange-rates API)',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: { group: 'rates', labels: { 'rate.coinbase.url': 'Coinbase base URL' } },
  rateSources: [coinbaseSource],
  settings: rateSourceSettings(coinbaseSource),
})
