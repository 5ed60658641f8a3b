import type { Address } from '@ton/core'
import {
  TransferLookupError,
  type BalanceReading,
  type ScanContext,
  type SeenAmount,
} from '#chains/chain_family'
import type Token from '#models/token'
import { fromBaseUnits } from '#support/text/money'
import { withToncenter } from '#plugins/ton/toncenter_client'
import type { JettonWalletAccount } from '#plugins/ton/ton_jetton_wallet'
import type { SeenOnAccount } from '#plugins/ton/ton_seen'

/**
 * The balance watch on TON (ScanContext.readBalances, ScanResult.seen and
 * .balances).
 *
 * A balance belongs to one account: TON to the watched wallet, a jetton to
 * the wallet's jetton wallet of it. An account's balance changes only in
 * its own transactions, and toncenter gives it with the id of the last one
 * (getAddressInformation; for a jetton wallet, runGetMethod get_wallet_data
 * answers with the `last_transaction_id` of the state it ran on). So a
 * reading with last transaction lt L is exact "as of L": it explains the
 * account's transactions with lt <= L and none after. The amounts seen
 * are measured on the same accounts (seenOnWallet, seenOnJettonWallet),
 * each with its transaction's lt.
 *
 * Logical times are per account, the core's reading height one per run.
 * They are mapped onto one numbering that keeps every comparison the
 * watch makes exact (placeHeights):
 * - the run's height H is above every reading's lt and above the last H;
 * - an amount seen on an account goes at its lt, raised above the height
 *   at which that account was last reported (so that it falls after the
 *   reading that does not hold it), and above H when it is above the lt of
 *   the reading reported this run (so that it falls after that reading);
 * - an amount an earlier reading of its account already held keeps its
 *   lt, at or below that reading: the watch counts it there, never again.
 * This holds as long as every amount of an account up to a reading's lt
 * was seen, and none above it, before that reading is reported: a reading
 * is reported once the account's listing has reached its lt (settle).
 */

/** A finished walk that has not reached a reading's lt holds it back this many more runs at most. */
export const BALANCE_GRACE_RUNS = 2

/** A reading taken: the balance in token units and the account's last transaction lt. */
export type AccountReading = { amount: string; lt: bigint }

/** A reading held back, in the cursor: `runs` counts the finished walks since that did not reach it. */
export type HeldReading = { amount: string; lt: string; runs: number }

/** The last reading of an account reported to the core: its lt and the height it was reported at. */
export type ReportedReading = { lt: string; height: string }

/** What the balance watch keeps per account in the cursor. */
export type AccountBalanceState = { reported?: ReportedReading; held?: HeldReading }

/** One account's part in a run: the amounts its walk saw, and the reading to report (if any). */
export type AccountBalanceRun = {
  /** Watched address and token the account's balance is reported as. */
  address: string
  contract: string | null
  /** The cursor's record of the account before this run. */
  before: AccountBalanceState
  seen: SeenOnAccount[]
  report?: AccountReading
}

const DIGITS = /^\d{1,40}$/

/** The balance state kept in an account cursor, checked (anything malformed is dropped). */
export function readBalanceState(entry: AccountBalanceState): AccountBalanceState {
  const reported =
    entry.reported && DIGITS.test(entry.reported.lt) && DIGITS.test(entry.reported.height)
      ? entry.reported
      : undefined
  const held =
    entry.held &&
    DIGITS.test(entry.held.lt) &&
    typeof entry.held.amount === 'string' &&
    Number.isInteger(entry.held.runs)
      ? entry.held
      : undefined
  return { ...(reported ? { reported } : {}), ...(held ? { held } : {}) }
}

/** Whether the height of the last run that reported readings is usable (kept in the cursor). */
export function readBalanceHeight(value: unknown): string | undefined {
  return typeof value === 'string' && DIGITS.test(value) ? value : undefined
}

/**
 * TON on a watched wallet (getAddressInformation): one request. Null when
 * the answer cannot be used; a failed request throws.
 */
export async function readWalletBalance(
  context: ScanContext,
  owner: Address,
  native: Token
): Promise<AccountReading | null> {
  try {
    const state = await withToncenter(context, (client) => client.accountState(owner))
    return { amount: fromBaseUnits(state.balance, native.decimals), lt: state.lastLt }
  } catch (error) {
    if (error instanceof TransferLookupError) return null
    throw error
  }
}

/**
 * A jetton on a watched wallet, read on its jetton wallet (runGetMethod
 * get_wallet_data): one request. Null when the answer cannot be used (no
 * last transaction in it, a wallet code without get_wallet_data); a
 * failed request throws.
 */
export async function readJettonBalance(
  context: ScanContext,
  wallet: JettonWalletAccount
): Promise<AccountReading | null> {
  try {
    const state = await withToncenter(context, (client) => client.jettonWalletState(wallet.address))
    return { amount: fromBaseUnits(state.balance, wallet.token.decimals), lt: state.lastLt }
  } catch (error) {
    if (error instanceof TransferLookupError) return null
    throw error
  }
}

/**
 * What becomes of an account's reading once its walk of this run is
 * done. A reading is taken just before the walk, so the walk normally
 * lists its last transaction: reported. Otherwise:
 * - the state is older than what earlier runs already listed (a lagging
 *   backend): dropped, amounts above it were already counted below;
 * - the walk did not finish (bounded run, outage): dropped, it may have
 *   seen amounts above the reading before those below;
 * - the walk finished below the reading's lt (the listing lags behind the
 *   state, or never shows a transaction): held, and reported when a later
 *   walk reaches it, or after BALANCE_GRACE_RUNS finished walks that did
 *   not: what the listing never shows is then an unexplained rise.
 */
export function settleReading(options: {
  fresh: AccountReading | null
  held: HeldReading | undefined
  /** lt of the newest transaction the account's walks had handled before this run (0: none). */
  doneBefore: bigint
  /** The same after this run's walk. */
  doneAfter: bigint
  finished: boolean
}): { report?: AccountReading; held?: HeldReading } {
  const { fresh, held, doneBefore, doneAfter, finished } = options
  const reading = fresh ?? (held ? { amount: held.amount, lt: BigInt(held.lt) } : null)
  if (!reading) return {}
  if (fresh && fresh.lt < doneBefore) return {}
  if (!finished) return {}
  if (doneAfter >= reading.lt) return { report: reading }
  const runs = fresh ? 0 : held!.runs + 1
  if (runs >= BALANCE_GRACE_RUNS) return { report: reading }
  return { held: { amount: reading.amount, lt: reading.lt.toString(), runs } }
}

function max(...values: bigint[]): bigint {
  return values.reduce((a, b) => (a > b ? a : b))
}

/**
 * The run's height and the height of every amount seen, as described at
 * the top of this file. `lastHeight` is the height of the last run that
 * reported readings (none yet: null).
 */
export function placeHeights(
  runs: AccountBalanceRun[],
  lastHeight: bigint | null
): { height: bigint | null; seen: SeenAmount[]; readings: BalanceReading[] } {
  const reported = runs.filter((run) => run.report)
  const height = reported.length
    ? max(lastHeight === null ? 0n : lastHeight + 1n, ...reported.map((run) => run.report!.lt))
    : null
  const seen: SeenAmount[] = []
  for (const run of runs) {
    const before = run.before.reported
      ? { lt: BigInt(run.before.reported.lt), height: BigInt(run.before.reported.height) }
      : null
    for (const { lt, ...amount } of run.seen) {
      let at: bigint
      if (before && lt <= before.lt) at = lt
      else if (run.report && height !== null && lt > run.report.lt) at = max(lt, height + 1n)
      else at = before ? max(lt, before.height + 1n) : lt
      seen.push({ ...amount, height: at.toString() })
    }
  }
  const readings = reported.map((run) => ({
    address: run.address,
    contract: run.contract,
    amount: run.report!.amount,
  }))
  return { height, seen, readings }
}
