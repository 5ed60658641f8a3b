import type Chain from '#models/chain'
import type { RpcBudget } from '#chains/rpc_pool'
import { commitmentFor } from '#plugins/solana/solana_commitment'
import { SETTINGS } from '#settings/definitions'

/**
 * How often the token accounts each wallet owns are listed again
 * (getTokenAccountsByOwner, one call per wallet and mint). Payers' wallets
 * send to the associated token account, which the scan always watches
 * (it is derived, and watched before it even exists); any other token
 * account of the wallet is found by this listing. A payment into such an
 * account created since the last listing is found at the next one (its
 * history is then read back to the previous listing), so at most this
 * late, well inside the scanner's late window. The listing costs one call
 * per wallet and mint per period, against one signature listing per
 * watched account per scan run (every few seconds): about 1% more calls at
 * the seeded interval. A balance reading (the balance watch) lists them
 * too, at no extra cost.
 */
export const TOKEN_ACCOUNTS_REFRESH_MS = 5 * 60_000

/**
 * The public endpoints run by the Solana Foundation allow, per IP, 100
 * requests per 10 s in all and 40 per 10 s for any single method. A scan
 * sends mostly one method at a time (getSignaturesForAddress per watched
 * account, then getTransaction per new signature), so the single-method
 * limit is the one a scan meets: 4 requests a second keeps every method,
 * and the whole, under its limit. They have no daily cap.
 */
export const PUBLIC_ENDPOINT_BUDGET: RpcBudget = { perSecond: 4, perDay: null }

const PUBLIC_HOSTS = new Set([
  'api.mainnet-beta.solana.com',
  'api.devnet.solana.com',
  'api.testnet.solana.com',
])

/** The public endpoints' budget; other providers (plans differ) get the core settings' (null). */
export function solanaRpcBudget(url: string): RpcBudget | null {
  let host: string
  try {
    host = new URL(url).hostname.toLowerCase()
  } catch {
    return null
  }
  return PUBLIC_HOSTS.has(host) ? PUBLIC_ENDPOINT_BUDGET : null
}

/**
 * Requests a day scanning costs when nothing arrives: each run asks
 * getSignaturesForAddress once per watched account (each wallet for SOL,
 * its associated token account per mint: one per enabled token), and once
 * more when the chain waits for `finalized` (the `confirmed` signatures
 * shown as "payment seen"); the wallets' token accounts are listed every
 * TOKEN_ACCOUNTS_REFRESH_MS (one getTokenAccountsByOwner per wallet and
 * token, counted for every token: an upper bound). Each new transaction to
 * a watched account adds one getTransaction, once; a mint's token program
 * is asked once ever; a token account the wallet owns besides its
 * associated one adds its own listing per run (a handful at most). The
 * balance watch: one read per wallet and token per reading (getBalance,
 * getTokenAccountsByOwner), every `chains.balance_check_minutes` (the
 * core passes the setting; its default otherwise).
 */
export function solanaRequestsPerDay(
  chain: Chain,
  addresses: number,
  tokens: number,
  balanceCheckMinutes: number = SETTINGS['chains.balance_check_minutes'].default
): number {
  const perRun = addresses * tokens * (commitmentFor(chain.confirmations) === 'finalized' ? 2 : 1)
  const listings = (addresses * tokens * 86_400_000) / TOKEN_ACCOUNTS_REFRESH_MS
  const minutes = balanceCheckMinutes
  const readings = minutes > 0 ? Math.ceil(1440 / minutes) * addresses * tokens : 0
  return Math.ceil((perRun * 86_400) / Math.max(1, chain.scanIntervalSeconds) + listings + readings)
}
