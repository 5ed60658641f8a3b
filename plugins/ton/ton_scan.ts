import { Address, type Transaction } from '@ton/core'
import type {
  ObservedTransfer,
  ScanContext,
  ScanResult,
  UnreadableTransfer,
} from '#chains/chain_family'
import { canonicalTonReference } from '#plugins/ton/ton_references'
import {
  jettonTokens,
  readWalletTransaction,
  type TransactionReading,
  type TransferReading,
} from '#plugins/ton/ton_transfers'
import { readJettonWalletTransaction } from '#plugins/ton/ton_jetton_wallet'
import {
  withToncenter,
  type ListedTransaction,
  type TransactionPoint,
} from '#plugins/ton/toncenter_client'
import { seenOnJettonWallet, seenOnWallet, type SeenOnAccount } from '#plugins/ton/ton_seen'
import {
  placeHeights,
  readBalanceHeight,
  readBalanceState,
  readJettonBalance,
  readWalletBalance,
  settleReading,
  type AccountBalanceRun,
  type AccountBalanceState,
  type AccountReading,
} from '#plugins/ton/ton_balances'

/** Transactions per getTransactions call (toncenter answers up to 100). */
export const TON_PAGE_SIZE = 50
/** A first scan looks this much further back than asked (block clocks vs ours). */
const START_MARGIN_SECONDS = 60

/**
 * Where one watched account (a wallet, or its jetton wallet of a jetton) stands.
 * - `done`: the newest transaction already handled (null: none yet);
 * - `since`: while `done` is null, transactions older than this unix time
 *   are not wanted (the first scan starts at the oldest open order);
 * - `walk`: a walk from `top` (the newest transaction when it started)
 *   down to `done` that stopped after `next` (handled) because a run is
 *   bounded or was interrupted;
 * - `reported`, `held`: the account's balance readings (ton_balances.ts).
 */
type AccountCursor = AccountBalanceState & {
  done: TransactionPoint | null
  since: number
  walk?: { top: TransactionPoint; next: TransactionPoint }
}

/**
 * The cursor the core persists for a TON network (JSON): watched wallets
 * by stored address, their jetton wallets by raw address; `balanceHeight`:
 * the height of the last run that reported balance readings.
 */
export type TonCursor = {
  version: 1
  scannedAt: number
  wallets: Record<string, AccountCursor>
  jettonWallets?: Record<string, AccountCursor>
  balanceHeight?: string
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

function readAccounts(value: unknown): Record<string, AccountCursor> {
  const accounts: Record<string, AccountCursor> = {}
  if (typeof value !== 'object' || !value) return accounts
  for (const [address, entry] of Object.entries(value as Record<string, AccountCursor>)) {
    if (entry.done !== null && !isPoint(entry.done)) continue
    if (typeof entry.since !== 'number') continue
    const walk =
      entry.walk && isPoint(entry.walk.top) && isPoint(entry.walk.next) ? entry.walk : undefined
    accounts[address] = {
      done: entry.done,
      since: entry.since,
      ...(walk ? { walk } : {}),
      ...readBalanceState(entry),
    }
  }
  return accounts
}

function readCursor(cursor: unknown): TonCursor | null {
  const value = cursor as TonCursor
  if (
    value?.version !== 1 ||
    typeof value.scannedAt !== 'number' ||
    typeof value.wallets !== 'object' ||
    !value.wallets
  ) {
    return null
  }
  const balanceHeight = readBalanceHeight(value.balanceHeight)
  return {
    version: 1,
    scannedAt: value.scannedAt,
    wallets: readAccounts(value.wallets),
    jettonWallets: readAccounts(value.jettonWallets),
    ...(balanceHeight ? { balanceHeight } : {}),
  }
}

type Walk = TransactionReading & {
  state: AccountCursor
  finished: boolean
  interrupted?: string
  /** Incoming amounts on the account, for the balance watch (read from every transaction handled). */
  seen: SeenOnAccount[]
}

/** A run stops at the first request that fails after the pool's retries: what it did is kept. */
class Interrupted extends Error {}

/**
 * Walks one account's transactions newest → older, from where the last run
 * stopped, down to the last handled transaction (or, the first time, to
 * `since`), reading at most `budget` transactions. A transaction is
 * handled (and the walk's position moves past it) only once it was read
 * whole: a request that fails (rate limit, outage, spent budget) stops the
 * walk just before it, and the next run takes it again. Toncenter only
 * serves transactions of blocks the masterchain references, which are final.
 */
async function walkAccount(
  context: ScanContext,
  account: Address,
  state: AccountCursor,
  budget: number,
  read: (entry: ListedTransaction) => Promise<TransactionReading>,
  unreadable: (entry: ListedTransaction, reason: string) => UnreadableTransfer,
  see: (transaction: Transaction) => SeenOnAccount | null
): Promise<Walk> {
  const floorLt = state.done ? BigInt(state.done.lt) : 0n
  let top = state.walk?.top ?? null
  let next = state.walk?.next
  let count = 0
  let finished = false
  let interrupted: string | undefined
  const result: TransactionReading = { transfers: [], unreadable: [], dust: 0 }
  const seen: SeenOnAccount[] = []

  try {
    while (!finished && count < budget) {
      const limit = Math.min(TON_PAGE_SIZE, budget - count)
      const page = await withToncenter(context, (client) =>
        client.transactions(account, { limit, before: next, afterLt: floorLt })
      )
      for (const entry of page) {
        const older = state.done ? BigInt(entry.point.lt) <= floorLt : entry.now < state.since
        if (older) {
          // The first transaction below the floor marks it for next time when nothing newer came.
          top ??= entry.point
          finished = true
          break
        }
        const reading = entry.transaction
          ? await read(entry)
          : { transfers: [], unreadable: [unreadable(entry, entry.unreadable!)], dust: 0 }
        result.transfers.push(...reading.transfers)
        result.unreadable.push(...reading.unreadable)
        result.dust += reading.dust
        const amount = entry.transaction ? see(entry.transaction) : null
        if (amount) seen.push(amount)
        top ??= entry.point
        next = entry.point
        count++
      }
      if (page.length < limit) finished = true
    }
  } catch (error) {
    interrupted = context.rpc.redact((error as Error).message || String(error))
    finished = false
  }

  result.transfers.reverse()
  result.unreadable.reverse()
  seen.reverse()
  const balance = readBalanceState(state)
  if (finished)
    return {
      ...result,
      seen,
      state: { done: top ?? state.done, since: state.since, ...balance },
      finished,
    }
  // Nothing handled yet: the account stays where it was.
  const walk = top && next ? { top, next } : undefined
  return {
    ...result,
    seen,
    state: { done: state.done, since: state.since, ...(walk ? { walk } : {}), ...balance },
    finished,
    interrupted,
  }
}

const doneLt = (state: AccountCursor) => (state.done ? BigInt(state.done.lt) : 0n)

/**
 * Walks one account with its balance reading: read first when the watch
 * is due and the account is not halfway through a walk or holding a
 * reading back (one request), then the walk, then what becomes of the
 * reading (settleReading). The walk's account state carries the result.
 */
async function walkWithReading(
  context: ScanContext,
  state: AccountCursor,
  options: {
    due: boolean
    read: () => Promise<AccountReading | null>
    walk: (state: AccountCursor) => Promise<Walk>
    address: string
    contract: string | null
  }
): Promise<{ walk: Walk; run: AccountBalanceRun }> {
  let fresh: AccountReading | null = null
  if (options.due && !state.walk && !state.held) {
    try {
      fresh = await options.read()
    } catch (error) {
      throw new Interrupted(context.rpc.redact((error as Error).message || String(error)))
    }
  }
  const walk = await options.walk(state)
  const settled = settleReading({
    fresh,
    held: state.held,
    doneBefore: doneLt(state),
    doneAfter: doneLt(walk.state),
    finished: walk.finished,
  })
  walk.state = { ...walk.state, held: settled.held }
  if (!settled.held) delete walk.state.held
  const run: AccountBalanceRun = {
    address: options.address,
    contract: options.contract,
    before: { ...(state.reported ? { reported: state.reported } : {}) },
    seen: walk.seen,
    ...(settled.report ? { report: settled.report } : {}),
  }
  return { walk, run }
}

function unreadableOf(account: Address, to: string, contract: string | null) {
  return (entry: ListedTransaction, reason: string): UnreadableTransfer => ({
    reference: canonicalTonReference(account, BigInt(entry.point.lt), entry.point.hash),
    to,
    contract,
    timestamp: entry.now * 1000,
    reason,
  })
}

/**
 * Finds incoming TON and jetton transfers of every watched wallet since
 * the cursor. Per wallet and run: one getTransactions on the wallet
 * (TON, notified jetton transfers) and one on its jetton wallet of each
 * jetton (transfers sent without notification, `forward_ton_amount = 0`),
 * more only when a page is full; plus, once per process, one
 * get_wallet_address per wallet and jetton, and one per payer of a
 * transfer seen only on the jetton wallet. Never per open order. A run
 * reads at most `chains.max_blocks_per_scan` transactions per account.
 * A request that fails after the pool's retries ends the run: what was
 * read is returned with a cursor just past it (`interrupted`).
 *
 * The balance watch (ton_balances.ts): every run reports the incoming
 * amounts its walks saw (`seen`, no request); when the watch is due, each
 * account's balance is read once, just before its walk
 * (getAddressInformation for the wallet's TON, get_wallet_data for each
 * jetton wallet), and reported as soon as the account's listing has
 * reached it (`balances`).
 */
export async function scanTon(context: ScanContext): Promise<ScanResult> {
  const scannedAt = Date.now()
  const previous = context.cursor === null ? null : readCursor(context.cursor)
  // An account the cursor does not know yet was added after the previous scan.
  const firstTime = previous ? Math.min(previous.scannedAt, context.startTime) : context.startTime
  const since = Math.floor(firstTime / 1000) - START_MARGIN_SECONDS
  const budget = Math.max(1, context.maxBlocksPerScan)
  const reading: TransferReading = {
    tokens: context.tokens,
    confirmations: context.chain.confirmations,
    jettonWalletOf: (master, owner) =>
      withToncenter(context, (client) => client.jettonWallet(master, owner)),
    isDust: context.isDust?.bind(context),
  }

  const wallets: Record<string, AccountCursor> = { ...(previous?.wallets ?? {}) }
  const jettonWallets: Record<string, AccountCursor> = { ...(previous?.jettonWallets ?? {}) }
  const transfers: ObservedTransfer[] = []
  const unreadable: UnreadableTransfer[] = []
  let dust = 0
  let caughtUp = true
  let interrupted: string | undefined

  const take = (walk: Walk) => {
    transfers.push(...walk.transfers)
    unreadable.push(...walk.unreadable)
    dust += walk.dust
    if (!walk.finished) caughtUp = false
    if (walk.interrupted) throw new Interrupted(walk.interrupted)
  }

  const native = context.tokens.find((token) => token.contract === null)
  const due = context.readBalances === true
  /** Each account walked, with where its cursor is kept. */
  const balanceRuns: {
    run: AccountBalanceRun
    accounts: Record<string, AccountCursor>
    key: string
  }[] = []

  try {
    for (const stored of context.addresses) {
      const owner = { address: Address.parse(stored), stored }
      const { walk, run } = await walkWithReading(
        context,
        wallets[stored] ?? { done: null, since },
        {
          due: due && native !== undefined,
          read: () => readWalletBalance(context, owner.address, native!),
          walk: (state) =>
            walkAccount(
              context,
              owner.address,
              state,
              budget,
              (entry) => readWalletTransaction(entry.transaction!, owner, reading),
              unreadableOf(owner.address, stored, null),
              (transaction) => seenOnWallet(transaction, owner, native)
            ),
          address: stored,
          contract: null,
        }
      )
      wallets[stored] = walk.state
      // TON not watched: its readings and amounts are not the watch's business.
      if (native) balanceRuns.push({ run, accounts: wallets, key: stored })
      take(walk)

      for (const token of jettonTokens(context.tokens)) {
        const master = Address.parse(token.contract!)
        let address: Address
        try {
          address = await reading.jettonWalletOf(master, owner.address)
        } catch (error) {
          throw new Interrupted(context.rpc.redact((error as Error).message || String(error)))
        }
        const key = address.toRawString()
        const wallet = { address, owner, token, master }
        const jetton = await walkWithReading(context, jettonWallets[key] ?? { done: null, since }, {
          due,
          read: () => readJettonBalance(context, wallet),
          walk: (state) =>
            walkAccount(
              context,
              address,
              state,
              budget,
              // A notified transfer is the owner's notification transaction, read above.
              async (entry) => readJettonWalletTransaction(entry.transaction!, wallet, reading),
              unreadableOf(address, stored, token.contract),
              (transaction) => seenOnJettonWallet(transaction, wallet)
            ),
          address: stored,
          contract: token.contract,
        })
        jettonWallets[key] = jetton.walk.state
        balanceRuns.push({ run: jetton.run, accounts: jettonWallets, key })
        take(jetton.walk)
      }
    }
  } catch (error) {
    if (!(error instanceof Interrupted)) throw error
    interrupted = error.message
    caughtUp = false
  }

  transfers.sort((a, b) => a.timestamp - b.timestamp)
  const lastHeight = previous?.balanceHeight ? BigInt(previous.balanceHeight) : null
  const placed = placeHeights(
    balanceRuns.map((entry) => entry.run),
    lastHeight
  )
  if (placed.height !== null) {
    // What the next runs place their amounts against.
    for (const { run, accounts, key } of balanceRuns) {
      if (!run.report) continue
      accounts[key] = {
        ...accounts[key],
        reported: { lt: run.report.lt.toString(), height: placed.height.toString() },
      }
    }
  }
  const balanceHeight = placed.height?.toString() ?? previous?.balanceHeight
  // Accounts an interrupted run did not reach must still be read from where they would have been.
  const from = interrupted ? firstTime : scannedAt
  const cursor: TonCursor = {
    version: 1,
    scannedAt: from,
    wallets,
    jettonWallets,
    ...(balanceHeight ? { balanceHeight } : {}),
  }
  return {
    transfers,
    cursor,
    caughtUp,
    ...(interrupted ? { interrupted } : {}),
    ...(unreadable.length ? { unreadable } : {}),
    ...(dust ? { dust } : {}),
    seen: placed.seen,
    ...(placed.height !== null
      ? { balances: { height: placed.height.toString(), readings: placed.readings } }
      : {}),
  }
}
