import type Chain from '#models/chain'
import type { RpcBudget } from '#chains/rpc_pool'
import { SETTINGS } from '#settings/definitions'

/**
 * toncenter.com's documented limits (docs.ton.org, "Rate limits"): 1
 * request/s without an API key, 10/s with a free-plan key (25/s Plus,
 * 100/s Advanced, for all the keys of a plan together); no daily cap. Assumed for any
 * endpoint (a self-hosted toncenter is usually more generous: the
 * operator raises the budget in the settings).
 */
export const TONCENTER_PER_SECOND_WITHOUT_KEY = 1
export const TONCENTER_PER_SECOND_WITH_KEY = 10
/**
 * Requests are paced this much below the limit: spaced exactly 1/limit
 * apart they reach the provider's bucket a hair early now and then
 * (timer and network jitter), and each such 429 costs a backoff.
 */
export const TONCENTER_PACING_MARGIN = 0.9

export function toncenterBudget(_url: string, apiKey: string): RpcBudget {
  const limit = apiKey ? TONCENTER_PER_SECOND_WITH_KEY : TONCENTER_PER_SECOND_WITHOUT_KEY
  return { perSecond: limit * TONCENTER_PACING_MARGIN, perDay: null }
}

/**
 * Calls a day. Scanning: each run reads each wallet once (TON and
 * notified jetton transfers) and its jetton wallet of each jetton once
 * (transfers without notification), with getTransactions. `tokens` counts
 * the enabled tokens, TON itself included: TON shares the wallet's call,
 * so a wallet costs one call per token and run (at least one). The
 * balance watch: one state read per wallet and token per reading
 * (getAddressInformation for TON, get_wallet_data for a jetton), every
 * `chains.balance_check_minutes` (the core passes the setting; its default
 * otherwise). One-off calls (a jetton wallet address, once per process; a
 * full page read again) are not counted.
 */
export function toncenterRequestsPerDay(
  chain: Chain,
  addresses: number,
  tokens: number,
  balanceCheckMinutes: number = SETTINGS['chains.balance_check_minutes'].default
): number {
  const runs = Math.ceil(86_400 / Math.max(1, chain.scanIntervalSeconds))
  const minutes = balanceCheckMinutes
  const readings = minutes > 0 ? Math.ceil(1440 / minutes) : 0
  return runs * addresses * Math.max(1, tokens) + readings * addresses * tokens
}
