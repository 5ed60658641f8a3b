import { definePlugin } from '#plugin_host/gateway_plugin'
import { TonFamily } from '#plugins/ton/ton_family'

/**
 * Seeded chains use the issuers' mainnet contracts; chains start enabled
 * but are offered to payers only once a wallet is added. Not seeded,
 * because no issuer contract exists there: USDC on TON; add it with
 * `token:set` when it appears.
 */
export default definePlugin({
  name: 'ton',
  description: 'TON: jetton and TON transfers',
  // lang/<locale>/cashier.json: the "I have paid" dialog's intro to TON's references.
  folder: new URL('./', import.meta.url),
  families: [new TonFamily()],
  seed: {
    chains: [
      {
        network: 'ton',
        family: 'ton',
        displayName: 'TON',
        rpcUrls: ['https://toncenter.com/api/v2/jsonRPC'],
        confirmations: 1,
        // Polled at the block time.
        scanIntervalSeconds: 5,
        blockTimeMs: 5000,
        explorerTxUrl: 'https://tonviewer.com/transaction/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'TON', contract: null, decimals: 9, amountPrecision: 4 },
        ],
      },
    ],
  },
})
