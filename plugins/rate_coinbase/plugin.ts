import { definePlugin } from '#app_plugins/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { coinbaseSource } from '#plugins/rate_coinbase/coinbase_source'

export default definePlugin({
  name: 'rate_coinbase',
  description: 'Exchange rates from Coinbase (public exchange-rates API)',
  rateSources: [coinbaseSource],
  settings: rateSourceSettings(coinbaseSource),
})
