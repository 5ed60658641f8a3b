import type Chain from '#models/chain'
import chainRegistry from '#chains/chain_registry'
import { rpcFor } from '#chains/chain_rpc'
import settings from '#settings/settings_service'

/** What watching a chain costs a day against what its endpoints allow (chain:list). */
export type ChainLoad = {
  /** Requests a day at the scan interval; null: the family gives no estimate. */
  estimate: number | null
  /** Requests a day all endpoints allow together (the pool moves on when one is spent); null: no cap. */
  perDay: number | null
  /** Requests per second of the first endpoint (the one scans use); null: unpaced. */
  perSecond: number | null
  /** RPC endpoints configured. */
  endpoints: number
  /** Why the budget does not fit, with what would; null when it fits or is not known. */
  warning: string | null
}

const MAX_INTERVAL = 3600

function estimateAt(
  chain: Chain,
  interval: number,
  wallets: number,
  tokens: number,
  balanceMinutes: number
): number | null {
  const family = chainRegistry.find(chain.family)
  if (!family?.requestsPerDay) return null
  const saved = chain.scanIntervalSeconds
  chain.scanIntervalSeconds = interval
  try {
    return family.requestsPerDay(chain, wallets, tokens, balanceMinutes)
  } finally {
    chain.scanIntervalSeconds = saved
  }
}

/** The shortest scan interval above `from` whose estimate fits the daily budget; null when none up to an hour does. */
function fittingInterval(
  chain: Chain,
  from: number,
  perDay: number,
  wallets: number,
  tokens: number,
  balanceMinutes: number
): number | null {
  for (let interval = from + 1; interval <= MAX_INTERVAL; interval++) {
    const estimate = estimateAt(chain, interval, wallets, tokens, balanceMinutes)
    if (estimate !== null && estimate <= perDay) return interval
  }
  return null
}

const count = (value: number) => value.toLocaleString('en-US')

/**
 * Seconds between two scans: the scan interval, or, with head
 * notifications (chains.ws_url), a scan per block when blocks come sooner.
 */
function cadence(chain: Chain): number {
  if (!chain.wsUrl) return chain.scanIntervalSeconds
  return Math.max(1, Math.min(chain.scanIntervalSeconds, Math.ceil(chain.blockTimeMs / 1000)))
}

export async function chainLoad(chain: Chain, wallets: number, tokens: number): Promise<ChainLoad> {
  const every = cadence(chain)
  const balanceMinutes = await settings.get('chains.balance_check_minutes')
  const estimate = estimateAt(chain, every, wallets, tokens, balanceMinutes)
  const rpc = await rpcFor(chain)
  const budgets = rpc.urls.map((url) => rpc.budget(url))
  const perDay =
    budgets.length === 0 || budgets.some((budget) => budget === null || budget.perDay === null)
      ? null
      : budgets.reduce((sum, budget) => sum + (budget?.perDay ?? 0), 0)
  const perSecond = budgets.length > 0 ? (budgets[0]?.perSecond ?? null) : null
  let warning: string | null = null
  if (chain.enabled && estimate !== null && estimate > 0) {
    const needs =
      `${chain.network} needs about ${count(estimate)} requests a day ` +
      `(${wallets} wallet(s), ${tokens} token(s), ` +
      `${chain.wsUrl ? `a scan on every new head, about every ${every} s` : `a scan every ${every} s`})`
    if (perDay !== null && estimate > perDay) {
      const interval = fittingInterval(chain, every, perDay, wallets, tokens, balanceMinutes)
      const fix = chain.wsUrl
        ? `chain:set ${chain.network} --ws "" --scan-interval ${interval}`
        : `chain:set ${chain.network} --scan-interval ${interval}`
      warning =
        `${needs} but its RPC endpoints allow ${count(perDay)}: scanning stops for the day when they are spent. ` +
        (interval ? `A scan interval of ${interval} s fits (${fix}); ` : '') +
        `or add an API key or an endpoint, or set the budget of your plan (--requests-per-day).`
    } else if (perSecond !== null && estimate / 86_400 > perSecond) {
      warning =
        `${needs}, more than the ${perSecond} request(s) per second its first RPC endpoint allows: scans fall behind. ` +
        `Raise the scan interval, or set the budget of your plan (--requests-per-second).`
    }
  }
  return { estimate, perDay, perSecond, endpoints: rpc.urls.length, warning }
}
