import { definePlugin } from '#app_plugins/gateway_plugin'
import { EvmFamily } from '#plugins/evm/evm_family'

/**
 * Seeded chains use the issuers' mainnet contracts; chains start enabled
 * but are offered to payers only once a wallet is added. Not seeded,
 * because no issuer contract exists there: USDC on Plasma (Plasma's
 * dollar is USDT0); add it with `token:set` when it appears.
 */
export default definePlugin({
  name: 'evm',
  description:
    'EVM chains (Ethereum, BNB Smart Chain, Polygon, Plasma): ERC-20 and native coin transfers',
  families: [new EvmFamily()],
  seed: {
    chains: [
      {
        network: 'ethereum',
        family: 'evm',
        displayName: 'Ethereum',
        options: { blockRange: 1000, chainId: 1 },
        rpcUrls: ['https://ethereum-rpc.publicnode.com'],
        confirmations: 12,
        // Polled at the block time (a WebSocket endpoint, chain:set --ws, scans on each head instead).
        scanIntervalSeconds: 12,
        blockTimeMs: 12000,
        explorerTxUrl: 'https://etherscan.io/tx/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'ETH', contract: null, decimals: 18, amountPrecision: 6 },
        ],
      },
      {
        network: 'bsc',
        family: 'evm',
        displayName: 'BNB Smart Chain',
        options: { blockRange: 1000, chainId: 56 },
        // Not BNB Chain's dataseed endpoints: they refuse eth_getLogs, so no token transfer would be seen.
        rpcUrls: ['https://bsc-rpc.publicnode.com'],
        confirmations: 15,
        scanIntervalSeconds: 3,
        blockTimeMs: 3000,
        explorerTxUrl: 'https://bscscan.com/tx/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: '0x55d398326f99059fF775485246999027B3197955',
            decimals: 18,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d',
            decimals: 18,
            amountPrecision: 2,
          },
          { symbol: 'BNB', contract: null, decimals: 18, amountPrecision: 6 },
        ],
      },
      {
        network: 'polygon',
        family: 'evm',
        displayName: 'Polygon',
        options: { blockRange: 1000, chainId: 137 },
        rpcUrls: ['https://polygon-rpc.com'],
        confirmations: 32,
        scanIntervalSeconds: 2,
        blockTimeMs: 2000,
        explorerTxUrl: 'https://polygonscan.com/tx/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'POL', contract: null, decimals: 18, amountPrecision: 4 },
        ],
      },
      {
        network: 'plasma',
        family: 'evm',
        displayName: 'Plasma',
        options: { blockRange: 1000, chainId: 9745 },
        rpcUrls: ['https://rpc.plasma.to'],
        confirmations: 6,
        scanIntervalSeconds: 1,
        blockTimeMs: 1000,
        explorerTxUrl: 'https://plasmascan.to/tx/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: '0xB8CE59FC3717ada4C02eaDF9682A9e934F625ebb',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'XPL', contract: null, decimals: 18, amountPrecision: 4 },
        ],
      },
    ],
  },
})
