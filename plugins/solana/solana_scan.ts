import logger from '@adonisjs/core/services/logger'
import { address, signature, type Address } from '@solana/kit'
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from '@solana-program/token'
import { TransferLookupError, type ObservedTransfer, type ScanContext, type ScanResult } from '#chains/chain_family'
import { commitmentFor, confirmationsAt, type SolanaCommitment } from '#plugins/solana/solana_commitment'
import type { SignatureInfo, SolanaRpc } from '#plugins/solana/solana_rpc'
import {
  associatedTokenAccounts,
  blockTimeMs,
  readTransfers,
  succeeded,
  type ChainTransfer,
  type JsonParsedTransaction,
  type TokenAccountOwners,
} from '#plugins/solana/solana_transfers'
import { unconfirmedSolana } from '#plugins/solana/solana_unconfirmed'

/**
 * Where the scan of one watched account stands.
 * - `until`: newest signature processed, everything older being done too
 *   (down to `since`); the next run asks only for newer ones.
 * - `since`: epoch ms; older transactions are never looked at (the first
 *   scan's start time, then the newest processed block time).
 * - `top`/`topTime`/`before`: a window of new signatures too long for one
 *   run: its newest signature (becomes `until` once the window is done),
 *   and the oldest one processed so far (the next run resumes below it).
 */
export type AccountCursor = {
  until: string | null
  since: number
  top?: string
  topTime?: number | null
  before?: string
}

export type SolanaCursor = {
  /** By watched account address (a wallet, or a wallet's associated token account). */
  accounts: Record<string, AccountCursor>
  /** Start of the last run; accounts watched for the first time start there. */
  scannedAt: number
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

/** An account whose history is read: the wallet (SOL) or its token account for one mint. */
type WatchedAccount = { account: Address; wallet: string; mint: string | null }

/** Associated token accounts are derived once per process (pure hashing, but per run adds up). */
const associatedCache = new Map<string, Address>()

async function associatedTokenAccount(wallet: string, mint: string): Promise<Address> {
  const key = `${wallet}:${mint}`
  let found = associatedCache.get(key)
  if (!found) {
    ;[found] = await findAssociatedTokenPda({ owner: address(wallet), mint: address(mint), tokenProgram: TOKEN_PROGRAM_ADDRESS })
    associatedCache.set(key, found)
  }
  return found
}

/**
 * The accounts to read: each wallet itself when the native coin is enabled
 * (a SOL transfer loads the wallet), and each wallet's associated token
 * account for every enabled mint (a transferChecked to an existing token
 * account does not load the owner's wallet at all).
 */
async function watchedAccounts(context: ScanContext): Promise<WatchedAccount[]> {
  const watched: WatchedAccount[] = []
  const nativeEnabled = context.tokens.some((token) => token.contract === null)
  const mints = context.tokens.map((token) => token.contract).filter((contract): contract is string => contract !== null)
  for (const wallet of context.addresses) {
    if (nativeEnabled) watched.push({ account: address(wallet), wallet, mint: null })
    for (const mint of mints) watched.push({ account: await associatedTokenAccount(wallet, mint), wallet, mint })
  }
  return watched
}

function readCursor(raw: unknown): SolanaCursor | null {
  if (!raw || typeof raw !== 'object') return null
  const cursor = raw as Partial<SolanaCursor>
  if (!cursor.accounts || typeof cursor.accounts !== 'object' || typeof cursor.scannedAt !== 'number') return null
  return cursor as SolanaCursor
}

const timeOf = (info: SignatureInfo) => (info.blockTime === null ? null : Number(info.blockTime) * 1000)

/**
 * Reads the new signatures of one account, newest first, page by page,
 * within the run's budget. Returns the account's next cursor and whether
 * its window was completed.
 */
async function readAccount(
  rpc: SolanaRpc,
  account: Address,
  start: AccountCursor,
  commitment: SolanaCommitment,
  limits: ScanLimits,
  visit: (info: SignatureInfo) => void
): Promise<{ cursor: AccountCursor; done: boolean }> {
  const cursor: AccountCursor = { ...start }
  let budget = limits.maxSignaturesPerAccount
  while (budget > 0) {
    const limit = Math.min(limits.pageSize, budget)
    const page = await rpc.signaturesForAddress(account, {
      limit,
      commitment,
      before: cursor.before ? signature(cursor.before) : undefined,
      until: cursor.until ? signature(cursor.until) : undefined,
    })
    budget -= page.length
    if (cursor.top === undefined && page.length > 0) {
      cursor.top = page[0].signature
      cursor.topTime = timeOf(page[0])
    }
    let floorReached = false
    for (const info of page) {
      const time = timeOf(info)
      if (time !== null && time < cursor.since - FLOOR_MARGIN_MS) {
        floorReached = true
        break
      }
      visit(info)
    }
    if (floorReached || page.length < limit) {
      const done: AccountCursor = { until: cursor.top ?? cursor.until, since: cursor.since }
      if (cursor.topTime) done.since = Math.max(cursor.since, cursor.topTime)
      return { cursor: done, done: true }
    }
    cursor.before = page[page.length - 1].signature
  }
  return { cursor, done: false }
}

/**
 * The transaction of a listed signature. One the node cannot serve in a
 * version this client reads is skipped with a warning rather than stopping
 * every later payment behind it.
 */
async function readableTransaction(rpc: SolanaRpc, info: SignatureInfo, commitment: SolanaCommitment) {
  try {
    return await rpc.transaction(info.signature, commitment, { required: true })
  } catch (error) {
    if (!(error instanceof TransferLookupError)) throw error
    logger.warn({ signature: info.signature, reason: error.message }, 'solana transaction skipped')
    return null
  }
}

/** Same rule for a transaction whose shape the parser does not understand. */
async function transfersOf(
  transaction: JsonParsedTransaction,
  known: TokenAccountOwners,
  info: SignatureInfo
): Promise<ChainTransfer[]> {
  try {
    return readTransfers(transaction, await associatedTokenAccounts(transaction, known))
  } catch (error) {
    logger.error({ signature: info.signature, err: error }, 'solana transaction could not be parsed; skipped')
    return []
  }
}

/**
 * One scan run: for each watched account, the signatures newer than its
 * cursor (at the chain's commitment), then each new successful transaction
 * once, parsed into transfers to the watched wallets of enabled tokens.
 * RPC calls: one getSignaturesForAddress per watched account (more only
 * when it has more new signatures than a page), one getTransaction per new
 * successful signature. Nothing depends on the number of open orders.
 * When finality is awaited, the newer `confirmed` signatures are looked at
 * too (solana_unconfirmed.ts) and reported as `unconfirmed`, never paid.
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
  const watched = await watchedAccounts(context)

  const found = new Map<string, SignatureInfo>()
  const cursor: SolanaCursor = { accounts: {}, scannedAt: runStart }
  let caughtUp = true
  for (const entry of watched) {
    const start = previous?.accounts[entry.account] ?? { until: null, since: firstSince }
    const result = await readAccount(rpc, entry.account, start, commitment, limits, (info) => {
      // a failed transaction moved nothing: not even worth fetching
      if (info.err === null && !found.has(info.signature)) found.set(info.signature, info)
    })
    cursor.accounts[entry.account] = result.cursor
    if (!result.done) caughtUp = false
  }

  const wallets = new Set(context.addresses)
  const contracts = new Set(context.tokens.map((token) => token.contract))
  const known: TokenAccountOwners = new Map(
    watched.filter((entry) => entry.mint !== null).map((entry) => [entry.account, { wallet: entry.wallet, mint: entry.mint! }])
  )

  const transfers: ObservedTransfer[] = []
  const ordered = [...found.values()].sort((a, b) => (a.slot < b.slot ? -1 : a.slot > b.slot ? 1 : 0))
  for (const info of ordered) {
    const transaction = await readableTransaction(rpc, info, commitment)
    if (!transaction || !succeeded(transaction)) continue
    const timestamp = blockTimeMs(transaction) ?? timeOf(info) ?? runStart
    const status: SolanaCommitment = info.confirmationStatus === 'finalized' ? 'finalized' : 'confirmed'
    for (const transfer of await transfersOf(transaction, known, info)) {
      if (!wallets.has(transfer.to) || !contracts.has(transfer.contract)) continue
      transfers.push({
        ...transfer,
        reference: info.signature,
        timestamp,
        confirmations: confirmationsAt(status, context.chain.confirmations),
        success: true,
      })
    }
  }
  const unconfirmed = await unconfirmedOf(context, rpc, commitment, caughtUp, watched, cursor, known)
  return { transfers, unconfirmed, cursor, caughtUp }
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
      watched.map((entry) => ({ account: entry.account, until: cursor.accounts[entry.account]?.until ?? null })),
      known,
      new Set(context.addresses),
      new Set(context.tokens.map((token) => token.contract))
    )
  } catch (error) {
    logger.warn({ network: context.chain.network, err: error }, 'unconfirmed solana transfers could not be read')
    return undefined
  }
}
