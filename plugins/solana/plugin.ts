import { definePlugin } from '#plugin_host/gateway_plugin'
import { SolanaFamily } from '#plugins/solana/solana_family'

/**
 * Seeded chains use the issuers' mainnet contracts; chains start enabled
 * but are offered to payers only once a wallet is added.
 */
export default definePlugin({
  name: 'solana',
  description: 'Solana: SPL token and SOL transfers',
  // lang/<locale>/admin.json: its description and address format on the plugins page.
  folder: new URL('./', import.meta.url),
  families: [new SolanaFamily()],
  seed: {
    chains: [
      {
        network: 'solana',
        family: 'solana',
        displayName: 'Solana',
        rpcUrls: ['https://api.mainnet-beta.solana.com'],
        confirmations: 32,
        // Blocks every 0.4 s; polled every 2 s, the shortest interval the public
        // endpoint's 4 requests/s allows for a wallet with 3 tokens at finality.
        scanIntervalSeconds: 2,
        blockTimeMs: 400,
        explorerTxUrl: 'https://explorer.solana.com/tx/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'SOL', contract: null, decimals: 9, amountPrecision: 6 },
        ],
      },
    ],
  },
})
