import logger from '@adonisjs/core/services/logger'
import { address, signature, type Address } from '@solana/kit'
import {
  TransferLookupError,
  type ObservedTransfer,
  type ScanContext,
  type ScanResult,
  type SeenAmount,
  type UnreadableTransfer,
} from '#chains/chain_family'
import {
  commitmentFor,
  confirmationsAt,
  type SolanaCommitment,
} from '#plugins/solana/solana_commitment'
import {
  ContextSlotNotReachedError,
  UnknownSignatureError,
  type SignatureInfo,
  type SolanaRpc,
} from '#plugins/solana/solana_rpc'
import {
  associatedTokenAccount,
  TOKEN_PROGRAM_ADDRESS,
  TOKEN_PROGRAMS,
} from '#plugins/solana/solana_programs'
import {
  blockTimeMs,
  readTransfers,
  succeeded,
  tokenAccountOwners,
  type TokenAccountOwners,
} from '#plugins/solana/solana_transfers'
import { unconfirmedSolana } from '#plugins/solana/solana_unconfirmed'
import {
  refreshTokenAccounts,
  type OwnerPair,
  type TokenAccountLists,
} from '#plugins/solana/solana_token_accounts'
import {
  balancesAsOf,
  readBalanceSnapshot,
  type BalanceSnapshot,
} from '#plugins/solana/solana_balances'

/**
 * Where the scan of one watched account stands. Signatures are listed
 * newest first, so a window of new signatures is processed from its top
 * down to the previous `until`.
 * - `until`/`untilSlot`: newest signature processed, everything older being
 *   done too (down to `since`); the next run asks only for newer ones.
 * - `since`: epoch ms; older transactions are never looked at (the first
 *   scan's start time, then the newest processed block time).
 * - `top`/`topSlot`/`topTime`: the newest signature of a window still in
 *   progress (becomes `until` once the window is done).
 * - `before`/`beforeSlot`: the oldest signature of that window processed so
 *   far; the next run resumes just below it.
 * - `skip`: slot ranges (low, high] already processed in this window, when
 *   it is re-read from its top because no endpoint knew `before` any more
 *   (one range per re-read: what lies between them was not processed).
 */
export type AccountCursor = {
  until: string | null
  untilSlot?: number
  since: number
  top?: string
  topSlot?: number
  topTime?: number | null
  before?: string
  beforeSlot?: number
  skip?: { low: number; high: number }[]
}

export type SolanaCursor = {
  /** By watched account address (a wallet, or one of its token accounts). */
  accounts: Record<string, AccountCursor>
  /**
   * Start of the last run; accounts watched for the first time start there
   * (a token account found by a listing: at the listing before).
   */
  scannedAt: number
  /** Token program of each mint (Token or Token-2022), learned once. */
  programs?: Record<string, string>
  /** The token accounts each wallet owns besides its associated ones, listed every few minutes (solana_token_accounts). */
  tokenAccounts?: TokenAccountLists
  /** The newest slot of a signature the scan has processed: a balance reading must be at least as recent. */
  processedSlot?: number
}

export type ScanLimits = {
  /** Signatures per getSignaturesForAddress call (the node allows 1..1000). */
  pageSize: number
  /** Signatures examined per account per run; more means `caughtUp: false`. */
  maxSignaturesPerAccount: number
}

export const DEFAULT_SCAN_LIMITS: ScanLimits = { pageSize: 100, maxSignaturesPerAccount: 200 }

/**
 * Block times come from validators' clocks and have second precision: the
 * time floor is applied this much earlier.
 */
const FLOOR_MARGIN_MS = 120_000

/**
 * An account whose history is read: the wallet (SOL) or one of its token
 * accounts for a mint; `since`: where a window starts when the account is
 * watched for the first time (epoch ms).
 */
type WatchedAccount = { account: Address; wallet: string; mint: string | null; since: number }

/**
 * The token program of each enabled mint: the cursor's, else asked once
 * (getAccountInfo) and kept in the cursor. A mint the node does not know
 * (or that no token program owns) is watched under the classic program
 * and asked again next run.
 */
async function mintPrograms(rpc: SolanaRpc, mints: string[], known: Record<string, string>) {
  const programs: Record<string, string> = {}
  const resolved: Record<string, string> = {}
  for (const mint of mints) {
    let program = known[mint]
    if (!program) {
      const owner = await rpc.accountOwner(address(mint))
      if (owner && TOKEN_PROGRAMS.has(owner)) program = owner
      else
        logger.warn(
          { mint, owner },
          'solana mint not found or not a token mint; watched under the Token program'
        )
    }
    if (program) resolved[mint] = program
    programs[mint] = program ?? TOKEN_PROGRAM_ADDRESS
  }
  return { programs, resolved }
}

/**
 * The accounts to read: each wallet itself when the native coin is enabled
 * (a SOL transfer loads the wallet), and for every enabled mint each
 * wallet's associated token account, under the mint's token program (a
 * transferChecked to an existing token account does not load the owner's
 * wallet at all), plus the other token accounts of the mint the wallet
 * owns (`lists`). A token account listed for the first time starts at the
 * listing before (it did not exist then) or, never listed, with the rest.
 */
async function watchedAccounts(
  context: ScanContext,
  programs: Record<string, string>,
  lists: TokenAccountLists,
  previousLists: TokenAccountLists,
  firstSince: number
): Promise<WatchedAccount[]> {
  const watched: WatchedAccount[] = []
  const nativeEnabled = context.tokens.some((token) => token.contract === null)
  const mints = context.tokens
    .map((token) => token.contract)
    .filter((contract): contract is string => contract !== null)
  for (const wallet of context.addresses) {
    if (nativeEnabled)
      watched.push({ account: address(wallet), wallet, mint: null, since: firstSince })
    for (const mint of mints) {
      const associated = await associatedTokenAccount(wallet, mint, programs[mint])
      watched.push({ account: associated, wallet, mint, since: firstSince })
      const listedBefore = previousLists[wallet]?.[mint]?.listedAt ?? null
      const since = listedBefore === null ? firstSince : Math.min(listedBefore, firstSince)
      for (const other of lists[wallet]?.[mint]?.others ?? []) {
        if (other !== associated) watched.push({ account: address(other), wallet, mint, since })
      }
    }
  }
  return watched
}

function readCursor(raw: unknown): SolanaCursor | null {
  if (!raw || typeof raw !== 'object') return null
  const cursor = raw as Partial<SolanaCursor>
  if (
    !cursor.accounts ||
    typeof cursor.accounts !== 'object' ||
    typeof cursor.scannedAt !== 'number'
  )
    return null
  return cursor as SolanaCursor
}

const timeOf = (info: SignatureInfo) =>
  info.blockTime === null ? null : Number(info.blockTime) * 1000

function unknownSignature(error: unknown): UnknownSignatureError | null {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof UnknownSignatureError) return current
  }
  return null
}

/**
 * Reads the new signatures of one account, newest first, page by page,
 * and processes each one as it goes, within the run's budget. `cursor` is
 * updated in place after every processed signature, so that when a call
 * fails midway it holds exactly what was done. Returns whether the window
 * was completed.
 *
 * Paging never trusts an endpoint blindly: a `before` no endpoint knows
 * (an empty page or an error, solana_rpc) makes the window be re-read from
 * its top, skipping the slots already processed; an `until` no endpoint
 * knows is dropped and the floor becomes its slot (and the time floor).
 * `until` only ever moves to a signature this window actually read.
 */
async function readAccount(
  rpc: SolanaRpc,
  account: Address,
  cursor: AccountCursor,
  commitment: SolanaCommitment,
  limits: ScanLimits,
  floor: ListingFloor,
  process: (info: SignatureInfo) => Promise<void>
): Promise<boolean> {
  let budget = limits.maxSignaturesPerAccount
  let recoveries = 0
  while (budget > 0) {
    const limit = Math.min(limits.pageSize, budget)
    let page: SignatureInfo[]
    try {
      page = await rpc.signaturesForAddress(account, {
        limit,
        commitment,
        before: cursor.before ? signature(cursor.before) : undefined,
        until: cursor.until ? signature(cursor.until) : undefined,
        minContextSlot: floor.slot ?? undefined,
      })
    } catch (error) {
      if (error instanceof ContextSlotNotReachedError) {
        // The listing node is behind the balance reading: another endpoint is
        // asked first (once); failing that, the listing goes on without the
        // floor and the reading is not reported this run.
        rpc.doubt(error.endpoint)
        if (!floor.retried && rpc.endpoints > 1) {
          floor.retried = true
          continue
        }
        logger.info(
          { account, minContextSlot: String(error.minContextSlot) },
          'solana listing behind the balance reading; reading dropped'
        )
        floor.slot = null
        floor.missed = true
        continue
      }
      const unknown = unknownSignature(error)
      if (!unknown || recoveries++ >= 2) throw error
      logger.warn(
        { account, parameter: unknown.parameter, signature: unknown.signature },
        'solana paging signature unknown to every endpoint; re-reading'
      )
      if (unknown.parameter === 'before') restartWindow(cursor)
      else cursor.until = null
      continue
    }
    budget -= page.length
    if (cursor.top === undefined && page.length > 0) {
      cursor.top = page[0].signature
      cursor.topSlot = Number(page[0].slot)
      cursor.topTime = timeOf(page[0])
    }
    let floorReached = false
    for (const info of page) {
      const time = timeOf(info)
      const slot = Number(info.slot)
      // an endpoint that ignores an `until` it does not know lists what was done before
      if (
        (cursor.untilSlot !== undefined && slot <= cursor.untilSlot) ||
        (time !== null && time < cursor.since - FLOOR_MARGIN_MS)
      ) {
        floorReached = true
        break
      }
      if (!cursor.skip?.some((range) => slot > range.low && slot <= range.high)) await process(info)
      cursor.before = info.signature
      cursor.beforeSlot = slot
    }
    if (floorReached || page.length < limit) {
      finishWindow(cursor)
      return true
    }
  }
  return false
}

/**
 * The slot this run's listings must reach (the balance reading's height),
 * null when no reading was taken; `retried` once a listing was asked again
 * elsewhere after a node behind it; `missed` once it was given up (the
 * reading is then not reported).
 */
type ListingFloor = { slot: bigint | null; retried: boolean; missed: boolean }

/** Re-read the window from the newest signature; what lies between `before` and the old top was processed. */
function restartWindow(cursor: AccountCursor) {
  if (cursor.beforeSlot !== undefined && cursor.topSlot !== undefined) {
    cursor.skip = [...(cursor.skip ?? []), { low: cursor.beforeSlot, high: cursor.topSlot }]
  }
  delete cursor.before
  delete cursor.beforeSlot
  delete cursor.top
  delete cursor.topSlot
  delete cursor.topTime
}

/** The window is done: its top becomes `until`, the next run asks for newer ones only. */
function finishWindow(cursor: AccountCursor) {
  if (cursor.top !== undefined) {
    cursor.until = cursor.top
    if (cursor.topSlot !== undefined) cursor.untilSlot = cursor.topSlot
    if (cursor.topTime) cursor.since = Math.max(cursor.since, cursor.topTime)
  }
  for (const key of ['top', 'topSlot', 'topTime', 'before', 'beforeSlot', 'skip'] as const)
    delete cursor[key]
}

/** What is kept of a window interrupted before anything of it was processed: nothing of it. */
function interruptedCursor(cursor: AccountCursor): AccountCursor {
  const kept = { ...cursor }
  if (kept.before === undefined) {
    delete kept.top
    delete kept.topSlot
    delete kept.topTime
  }
  return kept
}

/**
 * One scan run: for each watched account, the signatures newer than its
 * cursor (at the chain's commitment), each new successful transaction
 * fetched once as it is listed and parsed into transfers to the watched
 * wallets of enabled tokens.
 * RPC calls: one getSignaturesForAddress per watched account (more only
 * when it has more new signatures than a page), one getTransaction per new
 * successful signature (the listing carries no amount: dust cannot be told
 * before the transaction is read), one getAccountInfo per mint ever (its
 * token program), one getTokenAccountsByOwner per wallet and mint every
 * few minutes (solana_token_accounts). Nothing depends on the number of
 * open orders.
 * When a call fails for good midway (rate limit, outage), the run stops
 * there and returns what it processed, with a cursor just past it.
 * When finality is awaited, the newer `confirmed` signatures are looked at
 * too (solana_unconfirmed.ts) and reported as `unconfirmed`, never paid.
 *
 * Balance watch: every incoming amount processed is reported as `seen`,
 * dust included, at its slot. When the core asks for balances and the
 * previous run left no window half-read, they are read FIRST
 * (solana_balances), then every listing of the run is asked to reach the
 * reading's slot (minContextSlot): nothing can land between the reading
 * and what the listings cover. The reading is reported only when the run
 * caught up without interruption and no listing node was behind it.
 */
export async function scanSolana(
  context: ScanContext,
  rpc: SolanaRpc,
  limits: ScanLimits = DEFAULT_SCAN_LIMITS
): Promise<ScanResult> {
  const runStart = Date.now()
  const previous = readCursor(context.cursor)
  const firstSince = previous ? Math.min(previous.scannedAt, context.startTime) : context.startTime
  const commitment = commitmentFor(context.chain.confirmations)
  const mints = context.tokens
    .map((token) => token.contract)
    .filter((contract): contract is string => contract !== null)
  const { programs, resolved } = await mintPrograms(rpc, mints, previous?.programs ?? {})
  const knownPrograms = { ...previous?.programs, ...resolved }
  // a mint no node knows has no token accounts to list or read
  const existingMints = mints.filter((mint) => knownPrograms[mint])

  const snapshot =
    context.readBalances && !halfRead(previous)
      ? await readBalances(context, rpc, previous, existingMints, commitment)
      : null
  const pairs: OwnerPair[] = []
  for (const wallet of context.addresses) {
    for (const mint of existingMints)
      pairs.push({
        wallet,
        mint,
        associated: await associatedTokenAccount(wallet, mint, programs[mint]),
      })
  }
  const previousLists = previous?.tokenAccounts ?? {}
  const lists = await refreshTokenAccounts(
    rpc,
    pairs,
    previousLists,
    snapshot?.listings ?? new Map(),
    runStart
  )
  const watched = await watchedAccounts(context, programs, lists, previousLists, firstSince)

  const wallets = new Set(context.addresses)
  const contracts = new Set(context.tokens.map((token) => token.contract))
  const known: TokenAccountOwners = new Map(
    watched
      .filter((entry) => entry.mint !== null)
      .map((entry) => [entry.account, { wallet: entry.wallet, mint: entry.mint! }])
  )
  const cursor: SolanaCursor = {
    accounts: {},
    scannedAt: runStart,
    programs: knownPrograms,
    tokenAccounts: lists,
  }
  const found: { transfer: ObservedTransfer; slot: bigint }[] = []
  const seenAmounts: SeenAmount[] = []
  const unreadable: UnreadableTransfer[] = []
  const seen = new Set<string>()
  const floor: ListingFloor = { slot: snapshot?.height ?? null, retried: false, missed: false }
  let dust = 0

  let processedSlot = previous?.processedSlot ?? 0
  const process = (entry: WatchedAccount) => async (info: SignatureInfo) => {
    processedSlot = Math.max(processedSlot, Number(info.slot))
    // a failed transaction moved nothing: not even worth fetching
    if (info.err !== null || seen.has(info.signature)) return
    const readable = await readSignature(rpc, info, commitment, known)
    seen.add(info.signature)
    const timestamp = readable.timestamp ?? timeOf(info) ?? runStart
    if ('reason' in readable) {
      unreadable.push({
        reference: info.signature,
        to: entry.wallet,
        contract: entry.mint,
        timestamp,
        reason: readable.reason,
      })
      return
    }
    const status: SolanaCommitment =
      info.confirmationStatus === 'finalized' ? 'finalized' : 'confirmed'
    for (const transfer of readable.transfers) {
      if (!wallets.has(transfer.to) || !contracts.has(transfer.contract)) continue
      seenAmounts.push({
        reference: info.signature,
        position: transfer.position,
        to: transfer.to,
        contract: transfer.contract,
        amount: transfer.amount,
        height: info.slot.toString(),
      })
      if (context.isDust?.(transfer.contract, transfer.amount)) {
        dust++
        continue
      }
      const observed = {
        ...transfer,
        reference: info.signature,
        timestamp,
        confirmations: confirmationsAt(status, context.chain.confirmations),
        success: true,
      }
      found.push({ transfer: observed, slot: info.slot })
    }
  }

  let caughtUp = true
  let interrupted: string | undefined
  for (const entry of watched) {
    const start = previous?.accounts[entry.account]
    if (interrupted) {
      // not reached this run: it keeps its place (a new account its first start)
      cursor.accounts[entry.account] = start ?? { until: null, since: entry.since }
      continue
    }
    const state: AccountCursor = start ? { ...start } : { until: null, since: entry.since }
    try {
      if (
        !(await readAccount(rpc, entry.account, state, commitment, limits, floor, process(entry)))
      )
        caughtUp = false
      cursor.accounts[entry.account] = state
    } catch (error) {
      interrupted = context.rpc.redact((error as Error).message || String(error))
      caughtUp = false
      cursor.accounts[entry.account] = interruptedCursor(state)
      logger.warn(
        { network: context.chain.network, account: entry.account, err: error },
        'solana scan interrupted; progress kept'
      )
    }
  }

  if (processedSlot > 0) cursor.processedSlot = processedSlot
  found.sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0))
  const transfers = found.map((entry) => entry.transfer)
  const unconfirmed = interrupted
    ? undefined
    : await unconfirmedOf(context, rpc, commitment, caughtUp, watched, cursor, known)
  const balances =
    snapshot && caughtUp && !interrupted && !floor.missed
      ? balancesAsOf(snapshot, seenAmounts)
      : undefined
  return {
    transfers,
    unconfirmed,
    cursor,
    caughtUp,
    interrupted,
    unreadable,
    dust,
    seen: seenAmounts,
    balances,
  }
}

/** True when the last run stopped inside a window: newer signatures than its top are not listed this run. */
function halfRead(previous: SolanaCursor | null): boolean {
  return Object.values(previous?.accounts ?? {}).some(
    (entry) => entry.top !== undefined || entry.before !== undefined
  )
}

/**
 * The balance reading, at least as recent as the newest signature the scan
 * has processed (what was reported seen must be in the balance); cursors
 * from before `processedSlot` give their accounts' newest signatures.
 */
function readBalances(
  context: ScanContext,
  rpc: SolanaRpc,
  previous: SolanaCursor | null,
  mints: string[],
  commitment: SolanaCommitment
): Promise<BalanceSnapshot | null> {
  let floor: bigint | null = previous?.processedSlot ? BigInt(previous.processedSlot) : null
  for (const entry of Object.values(previous?.accounts ?? {})) {
    if (entry.untilSlot !== undefined && (floor === null || BigInt(entry.untilSlot) > floor))
      floor = BigInt(entry.untilSlot)
  }
  return readBalanceSnapshot(rpc, {
    wallets: context.addresses,
    native: context.tokens.some((token) => token.contract === null),
    mints,
    commitment,
    floor,
  })
}

type Reading =
  | { transfers: ReturnType<typeof readTransfers>; timestamp: number | null }
  | { reason: string; timestamp: number | null }

/**
 * The transfers of a listed signature, or why they cannot be read: a
 * version this client does not read, a failed-to-parse shape. Those are
 * reported (unreadable, kept as unmatched), never passed over; RPC
 * failures propagate (the run stops there and resumes at this signature).
 */
async function readSignature(
  rpc: SolanaRpc,
  info: SignatureInfo,
  commitment: SolanaCommitment,
  known: TokenAccountOwners
): Promise<Reading> {
  let transaction
  try {
    transaction = await rpc.transaction(info.signature, commitment, { required: true })
  } catch (error) {
    if (!(error instanceof TransferLookupError)) throw error
    return { reason: error.message, timestamp: null }
  }
  const timestamp = transaction ? blockTimeMs(transaction) : null
  if (!transaction || !succeeded(transaction)) return { transfers: [], timestamp }
  try {
    return {
      transfers: readTransfers(transaction, tokenAccountOwners(transaction, known)),
      timestamp,
    }
  } catch (error) {
    logger.error(
      { signature: info.signature, err: error },
      'solana transaction could not be parsed'
    )
    return { reason: `transaction could not be parsed: ${(error as Error).message}`, timestamp }
  }
}

/**
 * Confirmed-but-not-finalized transfers, for the payer's "payment seen"
 * state, when the chain waits for `finalized` (with `confirmed` enough,
 * nothing waits: []). None while an account is behind, and none when they
 * cannot be read (the scan itself must not fail for them).
 */
async function unconfirmedOf(
  context: ScanContext,
  rpc: SolanaRpc,
  commitment: SolanaCommitment,
  caughtUp: boolean,
  watched: WatchedAccount[],
  cursor: SolanaCursor,
  known: TokenAccountOwners
): Promise<ObservedTransfer[] | undefined> {
  if (commitment === 'confirmed') return []
  if (!caughtUp) return undefined
  try {
    return await unconfirmedSolana(
      rpc,
      watched.map((entry) => ({
        account: entry.account,
        until: cursor.accounts[entry.account]?.until ?? null,
      })),
      known,
      new Set(context.addresses),
      new Set(context.tokens.map((token) => token.contract))
    )
  } catch (error) {
    logger.warn(
      { network: context.chain.network, err: error },
      'unconfirmed solana transfers could not be read'
    )
    return undefined
  }
}
