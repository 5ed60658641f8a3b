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
  {
    host: /^bsc-(testnet-)?dataseed[\w-]*\.(bnbchain|binance|defibit|ninicoin|nariox)\.(org|io)$/,
    budget: { perSecond: 30, perDay: null },
  },
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
 * Calls one scan run sends once caught up (evm_scan.ts, evm_segment.ts and
 * evm_unconfirmed.ts), for `n` new blocks per run. The count of tokens
 * does not say which is the native coin, so both costs are counted (an
 * upper bound; the seeded chains watch both):
 * - eth_blockNumber: 1;
 * - the new blocks, each read once (with their transactions when the
 *   native coin is watched): they prove the log answers complete (logs
 *   bloom) and chain to the cursor (no separate header read);
 * - tokens: one eth_getLogs per segment (at most 200 blocks or the chain's
 *   `blockRange`), and one over the unconfirmed window;
 * - native coin: the unconfirmed window's blocks and the head again;
 * - traces (`traces=debug|parity`): one per new block (`auto` costs one
 *   refused call per endpoint that has none, then nothing: not counted);
 * - the balance watch: one read per address and token every
 *   `balanceCheckMinutes`.
 * The addresses are one filter of each eth_getLogs: their number costs
 * nothing. Each payment costs a receipt more, and a block whose bloom
 * wrongly says "maybe" one eth_getLogs by hash: not counted.
 */
export function evmRequestsPerDay(
  chain: Chain,
  addresses: number,
  tokens: number,
  balanceCheckMinutes = 10
): number {
  if (addresses === 0 || tokens === 0) return 0
  const interval = Math.max(1, chain.scanIntervalSeconds)
  const options = evmOptions(chain)
  const blocks = Math.max(1, Math.ceil((interval * 1000) / Math.max(1, chain.blockTimeMs)))
  const window = Math.max(1, chain.confirmations) > 1
  const segment = Math.min(200, options.blockRange)
  const logs = Math.ceil(blocks / segment) + (window ? 1 : 0)
  const native = window ? blocks + 1 : 0
  const traces = options.traces === 'debug' || options.traces === 'parity' ? blocks : 0
  const perRun = 1 + blocks + logs + native + traces
  const readings =
    balanceCheckMinutes > 0 ? Math.ceil(1440 / balanceCheckMinutes) * addresses * tokens : 0
  return Math.ceil((86_400 / interval) * perRun) + readings
}
