import { definePlugin } from '#plugin_host/gateway_plugin'
import { EvmFamily } from '#plugins/evm/evm_family'

/**
 * Seeded chains use the issuers' mainnet contracts (Tether's USDT0 list
 * for USDT where USDT0 is Tether's token there, Circle's list for USDC);
 * chains start enabled but are offered to payers only once a wallet is
 * added. Not seeded, because no issuer contract exists there: USDC on
 * Plasma (Plasma's dollar is USDT0) and USDT on Base (Tether issues none);
 * add them with `token:set` when they appear.
 *
 * The five networks after Plasma came later: they start disabled, so that
 * an installation upgraded to them neither scans nor offers them (nor asks
 * their public endpoints anything) until the operator has set an RPC URL
 * and a wallet and enabled them. Their numbers, one reason each:
 * - blockRange 1000 everywhere: scans read in segments of at most 200
 *   blocks anyway, and 1000 is within every public endpoint's log range.
 * - blockTimeMs: the chain's target (Arbitrum 0.25 s, OP Stack 2 s,
 *   Avalanche about 2 s, X Layer 1 s); the scan interval is the block time,
 *   whole seconds from 1, as for the other EVM chains.
 * - confirmations: about 15 to 20 seconds of blocks on the sequencer
 *   chains (Arbitrum, Base, OP Mainnet, X Layer): their blocks are final
 *   only as the sequencer's promise until posted to Ethereum, and a node
 *   restarting or a sequencer failing over can drop the newest few;
 *   Avalanche's blocks are final once accepted (Snowman), so 3 blocks
 *   (about 6 s, Plasma's margin) only absorb endpoints that lag.
 */
export default definePlugin({
  name: 'evm',
  description:
    'EVM chains (Ethereum, BNB Smart Chain, Polygon, Plasma, Arbitrum One, Base, OP Mainnet, Avalanche C-Chain, X Layer): ERC-20 and native coin transfers',
  // lang/<locale>/admin.json: its console texts (the chain page's help, the chain id field, the plugins page's description).
  folder: new URL('./', import.meta.url),
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
      {
        network: 'arbitrum',
        family: 'evm',
        displayName: 'Arbitrum One',
        enabled: false,
        options: { blockRange: 1000, chainId: 42161 },
        rpcUrls: ['https://arb1.arbitrum.io/rpc'],
        // 60 blocks of 0.25 s: 15 s past the sequencer's soft confirmation.
        confirmations: 60,
        scanIntervalSeconds: 1,
        blockTimeMs: 250,
        explorerTxUrl: 'https://arbiscan.io/tx/{tx}',
        tokens: [
          // USDT0: Tether upgraded Arbitrum's bridged USDT to it in place.
          {
            symbol: 'USDT',
            contract: '0xFd086bC7CD5C481DCC9C85ebE478A1C0b69FCbb9',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0xaf88d065e77c8cC2239327C5EDb3A432268e5831',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'ETH', contract: null, decimals: 18, amountPrecision: 6 },
        ],
      },
      {
        network: 'base',
        family: 'evm',
        displayName: 'Base',
        enabled: false,
        options: { blockRange: 1000, chainId: 8453 },
        rpcUrls: ['https://mainnet.base.org'],
        // 10 blocks of 2 s: 20 s, past an unsafe-head reorganisation of the OP Stack sequencer.
        confirmations: 10,
        scanIntervalSeconds: 2,
        blockTimeMs: 2000,
        explorerTxUrl: 'https://basescan.org/tx/{tx}',
        tokens: [
          {
            symbol: 'USDC',
            contract: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'ETH', contract: null, decimals: 18, amountPrecision: 6 },
        ],
      },
      {
        network: 'optimism',
        family: 'evm',
        displayName: 'OP Mainnet',
        enabled: false,
        options: { blockRange: 1000, chainId: 10 },
        rpcUrls: ['https://mainnet.optimism.io'],
        // 10 blocks of 2 s, as Base (the same OP Stack sequencer design).
        confirmations: 10,
        scanIntervalSeconds: 2,
        blockTimeMs: 2000,
        explorerTxUrl: 'https://optimistic.etherscan.io/tx/{tx}',
        tokens: [
          // USDT0 (Tether's list), not the older bridged "Tether USD" 0x94b0…8e58.
          {
            symbol: 'USDT',
            contract: '0x01bFF41798a0BcF287b996046Ca68b395DbC1071',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'ETH', contract: null, decimals: 18, amountPrecision: 6 },
        ],
      },
      {
        network: 'avalanche',
        family: 'evm',
        displayName: 'Avalanche C-Chain',
        enabled: false,
        options: { blockRange: 1000, chainId: 43114 },
        rpcUrls: ['https://api.avax.network/ext/bc/C/rpc'],
        // Final once accepted (Snowman): 3 blocks, about 6 s, for endpoints that lag.
        confirmations: 3,
        scanIntervalSeconds: 2,
        blockTimeMs: 2000,
        explorerTxUrl: 'https://snowtrace.io/tx/{tx}',
        tokens: [
          {
            symbol: 'USDT',
            contract: '0x9702230A8Ea53601f5cD2dc00fDBc13d4dF4A8c7',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'AVAX', contract: null, decimals: 18, amountPrecision: 4 },
        ],
      },
      {
        network: 'xlayer',
        family: 'evm',
        displayName: 'X Layer',
        enabled: false,
        options: { blockRange: 1000, chainId: 196 },
        rpcUrls: ['https://rpc.xlayer.tech'],
        // 20 blocks of 1 s: 20 s past the sequencer's soft confirmation, as Base and OP Mainnet.
        confirmations: 20,
        scanIntervalSeconds: 1,
        blockTimeMs: 1000,
        explorerTxUrl: 'https://www.oklink.com/xlayer/tx/{tx}',
        tokens: [
          // USDT0 and Circle's native USDC, not the older bridged USDT 0x1E4a…D41d and USDC.e 0x74b7…6d22.
          {
            symbol: 'USDT',
            contract: '0x779Ded0c9e1022225f8E0630b35a9b54bE713736',
            decimals: 6,
            amountPrecision: 2,
          },
          {
            symbol: 'USDC',
            contract: '0xB6CEceAB302E2E4948951eE7843FC24E92933061',
            decimals: 6,
            amountPrecision: 2,
          },
          { symbol: 'OKB', contract: null, decimals: 18, amountPrecision: 5 },
        ],
      },
    ],
  },
})
