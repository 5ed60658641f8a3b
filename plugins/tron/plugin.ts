import { definePlugin } from '#plugin_host/gateway_plugin'
import { TronFamily } from '#plugins/tron/tron_family'

/**
 * Seeded chains use the issuers' mainnet contracts; chains start enabled
 * but are offered to payers only once a wallet is added.
 */
export default definePlugin({
  name: 'tron',
  description: 'TRON: TRC-20 and TRX transfers',
  // lang/<locale>/admin.json: its console texts (the chain page's help, the plugins page's description).
  folder: new URL('./', import.meta.url),
  families: [new TronFamily()],
  seed: {
    chains: [
      {
        network: 'tron',
        family: 'tron',
        displayName: 'TRON',
        rpcUrls: ['https://api.trongrid.io'],
        confirmations: 19,
        // Polled at the block time. With a TronGrid key (100,000 requests a day)
        // more than one wallet × 3 tokens needs a longer interval: chain:list says which.
        scanIntervalSeconds: 3,
        blockTimeMs: 3000,
        explorerTxUrl: 'https://tronscan.org/#/transaction/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'TRX', contract: null, decimals: 6, amountPrecision: 2 },
        ],
      },
    ],
  },
})
