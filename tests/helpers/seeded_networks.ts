/** The networks a fresh installation's seeders write, in their order (sort_order). */

/** The EVM networks the evm plugin seeds. */
export const SEEDED_EVM_NETWORKS = [
  'ethereum',
  'bsc',
  'polygon',
  'plasma',
  'arbitrum',
  'base',
  'optimism',
  'avalanche',
  'xlayer',
]

/** Every network of a fresh installation with every bundled plugin: TRON first, then EVM, Solana and TON. */
export const SEEDED_NETWORKS = ['tron', ...SEEDED_EVM_NETWORKS, 'solana', 'ton']
