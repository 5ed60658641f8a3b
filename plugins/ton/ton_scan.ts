import { Address, type Transaction } from '@ton/core'
import type { ObservedTransfer, ScanContext, ScanResult } from '#chains/chain_family'
import { transfersOf, type TransferReading } from '#plugins/ton/ton_transfers'
import { withToncenter, type TransactionPoint } from '#plugins/ton/toncenter_client'

/** Transactions per getTransactions call (toncenter answers up to 100). */
export const TON_PAGE_SIZE = 50
/** A first scan looks this much further back than asked (block clocks vs ours). */
const START_MARGIN_SECONDS = 60

/**
 * Where one watched wallet stands.
 * - `done`: the newest transaction already handled (null: none yet);
 * - `since`: while `done` is null, transactions older than this unix time
 *   are not wanted (the first scan starts at the oldest open order);
 * - `walk`: a walk from `top` (the newest transaction when it started)
 *   down to `done` that stopped at `next` because a run is bounded.
 */
type WalletCursor = {
  done: TransactionPoint | null
  since: number
  walk?: { top: TransactionPoint; next: TransactionPoint }
}

/** The cursor the core persists for a TON network (JSON). */
export type TonCursor = { version: 1; scannedAt: number; wallets: Record<string, WalletCursor> }

function pointOf(transaction: Transaction): TransactionPoint {
  return { lt: transaction.lt.toString(), hash: transaction.hash().toString('hex') }
}

function isPoint(value: unknown): value is TransactionPoint {
  const point = value as TransactionPoint
  return (
    typeof point?.lt === 'string' &&
    /^\d+$/.test(point.lt) &&
    typeof point.hash === 'string' &&
    /^[0-9a-f]{64}$/.test(point.hash)
  )
}

function readCursor(cursor: unknown): TonCursor | null {
  const value = cursor as TonCursor
  if (value?.version !== 1 || typeof value.scannedAt !== 'number' || typeof value.wallets !== 'object' || !value.wallets) {
    return null
  }
  const wallets: Record<string, WalletCursor> = {}
  for (const [address, entry] of Object.entries(value.wallets)) {
    if (entry.done !== null && !isPoint(entry.done)) continue
    if (typeof entry.since !== 'number') continue
    const walk = entry.walk && isPoint(entry.walk.top) && isPoint(entry.walk.next) ? entry.walk : undefined
    wallets[address] = { done: entry.done, since: entry.since, ...(walk ? { walk } : {}) }
  }
  return { version: 1, scannedAt: value.scannedAt, wallets }
}

/**
 * Walks one wallet's transactions newest → older, from where the last run
 * stopped, down to the last handled transaction (or, the first time, to
 * `since`), reading at most `budget` transactions. Toncenter only serves
 * transactions of blocks the masterchain references, which are final.
 */
async function walkWallet(
  context: ScanContext,
  wallet: string,
  state: WalletCursor,
  budget: number,
  reading: TransferReading
): Promise<{ state: WalletCursor; transfers: ObservedTransfer[]; finished: boolean }> {
  const account = { address: Address.parse(wallet), stored: wallet }
  const floorLt = state.done ? BigInt(state.done.lt) : 0n
  let top = state.walk?.top ?? null
  let next = state.walk?.next
  let read = 0
  let finished = false
  const transfers: ObservedTransfer[] = []

  while (!finished && read < budget) {
    const limit = Math.min(TON_PAGE_SIZE, budget - read)
    const page = await withToncenter(context, (client) =>
      client.transactions(account.address, { limit, before: next, afterLt: floorLt })
    )
    for (const transaction of page) {
      const older = state.done ? transaction.lt <= floorLt : transaction.now < state.since
      if (older) {
        // The first transaction below the floor marks it for next time when nothing newer came.
        top ??= pointOf(transaction)
        finished = true
        break
      }
      top ??= pointOf(transaction)
      transfers.push(...(await transfersOf(transaction, account, reading)))
      next = pointOf(transaction)
      read++
    }
    if (page.length < limit) finished = true
  }

  if (finished) return { state: { done: top ?? state.done, since: state.since }, transfers, finished }
  return { state: { done: state.done, since: state.since, walk: { top: top!, next: next! } }, transfers, finished }
}

/**
 * Finds incoming TON and jetton transfers of every watched wallet since
 * the cursor. Cost: one getTransactions call per wallet and page of new
 * transactions, plus one get_wallet_address per wallet and jetton per
 * process (when a notification arrives); never per open order. A run reads
 * at most `chains.max_blocks_per_scan` transactions per wallet (TON has no
 * block range to walk: transactions are read per account).
 */
export async function scanTon(context: ScanContext): Promise<ScanResult> {
  const scannedAt = Date.now()
  const previous = context.cursor === null ? null : readCursor(context.cursor)
  // A wallet the cursor does not know yet was added after the previous scan.
  const firstTime = previous ? Math.min(previous.scannedAt, context.startTime) : context.startTime
  const since = Math.floor(firstTime / 1000) - START_MARGIN_SECONDS
  const budget = Math.max(1, context.maxBlocksPerScan)
  const reading: TransferReading = {
    tokens: context.tokens,
    confirmations: context.chain.confirmations,
    jettonWalletOf: (master, owner) => withToncenter(context, (client) => client.jettonWallet(master, owner)),
  }

  const wallets: Record<string, WalletCursor> = { ...(previous?.wallets ?? {}) }
  const transfers: ObservedTransfer[] = []
  let caughtUp = true
  for (const wallet of context.addresses) {
    const result = await walkWallet(context, wallet, wallets[wallet] ?? { done: null, since }, budget, reading)
    wallets[wallet] = result.state
    transfers.push(...result.transfers.reverse())
    if (!result.finished) caughtUp = false
  }
  const cursor: TonCursor = { version: 1, scannedAt, wallets }
  return { transfers, cursor, caughtUp }
}
