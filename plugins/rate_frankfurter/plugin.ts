import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { frankfurterSource } from '#plugins/rate_frankfurter/frankfurter_source'

export default definePlugin({
  name: 'rate_frankfurter',
  description: 'USD → fiat crosses from Frankfurter (ECB reference rates)',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: {
    group: 'rates',
    labels: { 'rate.frankfurter.url': 'Frankfurter (ECB) base URL' },
  },
  rateSources: [frankfurterSource],
  settings: rateSourceSettings(frankfurterSource),
})
