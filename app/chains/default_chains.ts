/**
 * Chains and tokens installed by `node ace setup`. Chains start enabled but
 * are offered to payers only once a wallet is added (see config endpoint).
 * Contract addresses are the issuers' mainnet contracts.
 *
 * Not seeded, because no issuer contract exists there: USDC on Plasma
 * (Plasma's dollar is USDT0) and USDC on TON. Add them with `token:set`
 * when they appear.
 */
export type DefaultToken = {
  symbol: string
  contract: string | null
  decimals: number
  amountPrecision: number
}

export type DefaultChain = {
  network: string
  family: 'evm' | 'tron' | 'solana' | 'ton'
  displayName: string
  chainId: number | null
  rpcUrls: string[]
  confirmations: number
  scanIntervalSeconds: number
  /** Typical time between two blocks (ms): sizes the late-payment grace. */
  blockTimeMs: number
  /** Transaction page of the network's block explorer, `{tx}` standing for the reference. */
  explorerTxUrl: string
  tokens: DefaultToken[]
}

export const DEFAULT_CHAINS: DefaultChain[] = [
  {
    network: 'tron',
    family: 'tron',
    displayName: 'TRON',
    chainId: null,
    rpcUrls: ['https://api.trongrid.io'],
    confirmations: 19,
    scanIntervalSeconds: 5,
    blockTimeMs: 3000,
    explorerTxUrl: 'https://tronscan.org/#/transaction/{tx}',
    tokens: [
      { symbol: 'USDT', contract: 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t', decimals: 6, amountPrecision: 2 },
      { symbol: 'USDC', contract: 'TEkxiTehnzSmSe2XqrBj4w32RUN966rdz8', decimals: 6, amountPrecision: 2 },
      { symbol: 'TRX', contract: null, decimals: 6, amountPrecision: 2 },
    ],
  },
  {
    network: 'ethereum',
    family: 'evm',
    displayName: 'Ethereum',
    chainId: 1,
    rpcUrls: ['https://ethereum-rpc.publicnode.com'],
    confirmations: 12,
    scanIntervalSeconds: 15,
    blockTimeMs: 12000,
    explorerTxUrl: 'https://etherscan.io/tx/{tx}',
    tokens: [
      { symbol: 'USDT', contract: '0xdAC17F958D2ee523a2206206994597C13D831ec7', decimals: 6, amountPrecision: 2 },
      { symbol: 'USDC', contract: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48', decimals: 6, amountPrecision: 2 },
      { symbol: 'ETH', contract: null, decimals: 18, amountPrecision: 6 },
    ],
  },
  {
    network: 'bsc',
    family: 'evm',
    displayName: 'BNB Smart Chain',
    chainId: 56,
    rpcUrls: ['https://bsc-dataseed.bnbchain.org'],
    confirmations: 15,
    scanIntervalSeconds: 5,
    blockTimeMs: 3000,
    explorerTxUrl: 'https://bscscan.com/tx/{tx}',
    tokens: [
      { symbol: 'USDT', contract: '0x55d398326f99059fF775485246999027B3197955', decimals: 18, amountPrecision: 2 },
      { symbol: 'USDC', contract: '0x8AC76a51cc950d9822D68b83fE1Ad97B32Cd580d', decimals: 18, amountPrecision: 2 },
      { symbol: 'BNB', contract: null, decimals: 18, amountPrecision: 6 },
    ],
  },
  {
    network: 'polygon',
    family: 'evm',
    displayName: 'Polygon',
    chainId: 137,
    rpcUrls: ['https://polygon-rpc.com'],
    confirmations: 32,
    scanIntervalSeconds: 5,
    blockTimeMs: 2000,
    explorerTxUrl: 'https://polygonscan.com/tx/{tx}',
    tokens: [
      { symbol: 'USDT', contract: '0xc2132D05D31c914a87C6611C10748AEb04B58e8F', decimals: 6, amountPrecision: 2 },
      { symbol: 'USDC', contract: '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', decimals: 6, amountPrecision: 2 },
      { symbol: 'POL', contract: null, decimals: 18, amountPrecision: 4 },
    ],
  },
  {
    network: 'plasma',
    family: 'evm',
    displayName: 'Plasma',
    chainId: 9745,
    rpcUrls: ['https://rpc.plasma.to'],
    confirmations: 6,
    scanIntervalSeconds: 5,
    blockTimeMs: 1000,
    explorerTxUrl: 'https://plasmascan.to/tx/{tx}',
    tokens: [
      { symbol: 'USDT', contract: '0xB8CE59FC3717ada4C02eaDF9682A9e934F625ebb', decimals: 6, amountPrecision: 2 },
      { symbol: 'XPL', contract: null, decimals: 18, amountPrecision: 4 },
    ],
  },
  {
    network: 'solana',
    family: 'solana',
    displayName: 'Solana',
    chainId: null,
    rpcUrls: ['https://api.mainnet-beta.solana.com'],
    confirmations: 32,
    scanIntervalSeconds: 5,
    blockTimeMs: 400,
    explorerTxUrl: 'https://explorer.solana.com/tx/{tx}',
    tokens: [
      { symbol: 'USDT', contract: 'Es9vMFrzaCERmJfrF4H2FYD4KCoNkY11McCe8BenwNYB', decimals: 6, amountPrecision: 2 },
      { symbol: 'USDC', contract: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v', decimals: 6, amountPrecision: 2 },
      { symbol: 'SOL', contract: null, decimals: 9, amountPrecision: 6 },
    ],
  },
  {
    network: 'ton',
    family: 'ton',
    displayName: 'TON',
    chainId: null,
    rpcUrls: ['https://toncenter.com/api/v2/jsonRPC'],
    confirmations: 1,
    scanIntervalSeconds: 5,
    blockTimeMs: 5000,
    explorerTxUrl: 'https://tonviewer.com/transaction/{tx}',
    tokens: [
      { symbol: 'USDT', contract: 'EQCxE6mUtQJKFnGfaROTKOt1lZbDiiX1kCixRv7Nw2Id_sDs', decimals: 6, amountPrecision: 2 },
      { symbol: 'TON', contract: null, decimals: 9, amountPrecision: 4 },
    ],
  },
]
