import { definePlugin } from '#app_plugins/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { frankfurterSource } from '#plugins/rate_frankfurter/frankfurter_source'

export default definePlugin({
  name: 'rate_frankfurter',
  description: 'USD → fiat crosses from Frankfurter (ECB reference rates)',
  rateSources: [frankfurterSource],
  settings: rateSourceSettings(frankfurterSource),
})
