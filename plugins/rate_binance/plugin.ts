import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { binanceSource } from '#plugins/rate_binance/binance_source'

export default definePlugin({
  name: 'rate_binance',
  description: 'Exchange rates from Binance spot tickers (tokens in USDT; no key needed)',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: { group: 'rates', labels: { 'rate.binance.url': 'Binance base URL' } },
  rateSources: [binanceSource],
  settings: rateSourceSettings(binanceSource),
})
