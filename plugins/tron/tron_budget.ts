import type Chain from '#models/chain'
import type { RpcBudget } from '#chains/rpc_pool'
import { tronOptions } from '#plugins/tron/tron_options'
import { SETTINGS } from '#settings/definitions'

/**
 * TronGrid's documented limits: 100,000 requests per day per account
 * with an API key, at most 15 requests per second (the lowest figure its
 * rate-limit pages give; beyond it every request is refused for 30 s).
 */
export const TRONGRID_WITH_KEY: RpcBudget = { perSecond: 15, perDay: 100_000 }
/**
 * Without a key TronGrid limits by IP, at a rate it documents only as
 * "severely limited" and lowers over time; no daily quota is documented.
 * 2 per second keeps a keyless install out of the 30 s penalty.
 */
export const TRONGRID_WITHOUT_KEY: RpcBudget = { perSecond: 2, perDay: null }
/**
 * TronGrid's documented tier; null for any other endpoint: the operator's
 * own node is not limited, another provider gets the core's default budget
 * (or the one set on the chain).
 */
export function tronRpcBudget(url: string, apiKey: string): RpcBudget | null {
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return null
  }
  if (host !== 'trongrid.io' && !host.endsWith('.trongrid.io')) return null
  return apiKey ? TRONGRID_WITH_KEY : TRONGRID_WITHOUT_KEY
}

/**
 * Requests a day scanning costs when nothing is paid: per run two head
 * reads and one listing per address × token; per deep re-scan one more
 * listing per address × token; per balance reading one read per address
 * × token and two solid head reads, every `balanceCheckMinutes` (the core
 * passes chains.balance_check_minutes; 0: the watch is off). Payments add one receipt per TRC-20 or
 * internal transfer, plus one per run while it is not yet solidified
 * (about a minute), and a balance reading put off because a transfer
 * came in while it was read costs one more — not counted here: they
 * follow the traffic, not the setup.
 */
export function tronRequestsPerDay(
  chain: Chain,
  addresses: number,
  tokens: number,
  balanceCheckMinutes: number = SETTINGS['chains.balance_check_minutes'].default
): number {
  // Nothing to watch: the scanner does not run.
  if (addresses === 0 || tokens === 0) return 0
  const options = tronOptions(chain)
  const streams = addresses * tokens
  const runs = 86_400 / Math.max(1, chain.scanIntervalSeconds)
  const deepPasses = options.deepScanHours > 0 ? 1440 / options.deepScanEveryMinutes : 0
  const readings = balanceCheckMinutes > 0 ? 1440 / balanceCheckMinutes : 0
  return Math.ceil(runs * (2 + streams) + deepPasses * streams + readings * (2 + streams))
}
