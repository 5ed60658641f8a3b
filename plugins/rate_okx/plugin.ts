import { definePlugin } from '#app_plugins/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { okxSource } from '#plugins/rate_okx/okx_source'
import { okxP2pSource } from '#plugins/rate_okx/okx_p2p_source'

export default definePlugin({
  name: 'rate_okx',
  description: 'Exchange rates from OKX: spot tickers (in USDT) and P2P offers for USDT in CNY',
  rateSources: [okxSource, okxP2pSource],
  settings: { ...rateSourceSettings(okxSource), ...rateSourceSettings(okxP2pSource) },
})
