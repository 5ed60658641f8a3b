import type Chain from '#models/chain'
import type { RpcBudget } from '#chains/rpc_pool'
import { evmOptions } from '#plugins/evm/evm_options'

/**
 * Free tiers of the EVM providers, in requests (one JSON-RPC call each;
 * a batch counts its calls, as these providers bill them). Sources and
 * the arithmetic are in README.md, "Request budgets". A provider not
 * listed here (publicnode, polygon-rpc.com, rpc.plasma.to publish no
 * limit) gets the core default.
 */
const TIERS: { host: RegExp; budget: RpcBudget }[] = [
  // Infura free: 500 credits/s and 3,000,000 credits a day (reset 00:00
  // UTC), at the default 80 credits a call.
  { host: /(^|\.)infura\.io$/, budget: { perSecond: 6, perDay: 37_500 } },
  // Alchemy free: 500 compute units/s over a 10 s window; eth_getLogs costs
  // 75 CU, the heaviest call a scan sends. The cap is monthly, not daily.
  { host: /(^|\.)alchemy\.com$/, budget: { perSecond: 6, perDay: null } },
  // BNB Chain's public dataseed endpoints: 10,000 requests per 5 minutes.
  { host: /^bsc-(testnet-)?dataseed[\w-]*\.(bnbchain|binance|defibit|ninicoin|nariox)\.(org|io)$/, budget: { perSecond: 30, perDay: null } },
  // dRPC's free public nodes: 40 eth_call/s at the lowest per-IP limit.
  { host: /(^|\.)drpc\.org$/, budget: { perSecond: 40, perDay: null } },
]

export function evmRpcBudget(url: string): RpcBudget | null {
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return null
  }
  return TIERS.find((tier) => tier.host.test(host))?.budget ?? null
}

/**
 * Calls one scan run sends once caught up (evm_scan.ts and
 * evm_unconfirmed.ts), for `n` new blocks per run. The count of tokens
 * does not say which is the native coin, so both costs are counted (an
 * upper bound; the seeded chains watch both):
 * - eth_blockNumber and the cursor block's header: 2;
 * - tokens: eth_getLogs per `blockRange` blocks of the new range, one over
 *   the unconfirmed window, the last block's header;
 * - native coin: every new block with its transactions, once in the
 *   confirmed range and once in the unconfirmed window, plus the head.
 * The addresses are one filter of each eth_getLogs: their number costs
 * nothing. Each payment costs a header or a receipt more, not counted.
 */
export function evmRequestsPerDay(chain: Chain, addresses: number, tokens: number): number {
  if (addresses === 0 || tokens === 0) return 0
  const interval = Math.max(1, chain.scanIntervalSeconds)
  const blocks = Math.max(1, Math.ceil((interval * 1000) / Math.max(1, chain.blockTimeMs)))
  const window = Math.max(1, chain.confirmations) > 1
  const logs = Math.ceil(blocks / evmOptions(chain).blockRange) + (window ? 1 : 0) + 1
  const native = blocks + (window ? blocks + 1 : 0)
  const perRun = 2 + logs + native
  return Math.ceil((86_400 / interval) * perRun)
}
