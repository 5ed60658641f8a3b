import { definePlugin } from '#app_plugins/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { binanceSource } from '#plugins/rate_binance/binance_source'

export default definePlugin({
  name: 'rate_binance',
  description: 'Exchange rates from Binance spot tickers (tokens in USDT; no key needed)',
  rateSources: [binanceSource],
  settings: rateSourceSettings(binanceSource),
})
