import { definePlugin } from '#plugin_host/gateway_plugin'
import { rateSourceSettings } from '#rates/source_settings'
import { okxSource } from '#plugins/rate_okx/okx_source'
import { okxP2pSource } from '#plugins/rate_okx/okx_p2p_source'

export default definePlugin({
  name: 'rate_okx',
  description: 'Exchange rates from OKX: spot tickers (in USDT) and P2P offers for USDT in CNY',
  // lang/<locale>/settings.json: its settings' titles, labels and help on the console.
  folder: new URL('./', import.meta.url),
  adminSettings: {
    group: 'rates',
    labels: { 'rate.okx.url': 'OKX base URL', 'rate.okx_p2p.url': 'OKX P2P base URL' },
  },
  rateSources: [okxSource, okxP2pSource],
  settings: { ...rateSourceSettings(okxSource), ...rateSourceSettings(okxP2pSource) },
})
