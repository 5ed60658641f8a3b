import { definePlugin } from '#app_plugins/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { krakenSource } from '#plugins/rate_kraken/kraken_source'

export default definePlugin({
  name: 'rate_kraken',
  description: 'Exchange rates from Kraken (public ticker)',
  rateSources: [krakenSource],
  settings: rateSourceSettings(krakenSource),
})
