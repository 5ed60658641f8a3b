import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { krakenSource } from '#plugins/rate_kraken/kraken_source'

export default definePlugin({
  name: 'rate_kraken',
  description: 'Exchange rates from Kraken (public ticker)',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: { group: 'rates', labels: { 'rate.kraken.url': 'Kraken base URL' } },
  rateSources: [krakenSource],
  settings: rateSourceSettings(krakenSource),
})
