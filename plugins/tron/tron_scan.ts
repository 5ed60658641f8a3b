import logger from '@adonisjs/core/services/logger'
import type Token from '#models/token'
import type { ObservedTransfer, ScanContext, ScanResult } from '#chains/chain_family'
import { tronAddressFromAny } from '#plugins/tron/tron_addresses'
import { fromBaseUnits } from '#support/money'
import { pruneReported, readCursor, reportKey, type TronScanCursor } from '#plugins/tron/tron_scan_cursor'
import {
  TronGridClient,
  type TronTransaction,
  type TronTransactionInfo,
  type Trc20TransferRow,
} from '#plugins/tron/trongrid_client'

/**
 * How far back each listing starts before the solid head seen by the
 * previous run. TronGrid's v1 index marks a transaction confirmed some time
 * after the node solidifies its block (seconds normally, minutes when the
 * indexer lags, and failover may switch to a provider that lags more): a
 * transfer that becomes visible late is still inside the window. Re-listed
 * transfers cost no lookup (`reported`), only page bytes, so the window is
 * generous.
 */
export const OVERLAP_MS = 10 * 60_000
/** First scan: block times come from producers' clocks; start a little before the oldest order. */
export const FIRST_SCAN_MARGIN_MS = 60_000
/** Pages (of 200 rows) one stream lists per run; the rest waits for the next run (caughtUp false). */
export const MAX_PAGES_PER_STREAM = 5

/** One listing: incoming transfers of one token (or TRX) to one watched address. */
type Stream = { key: string; address: string; token: Token }

/** A listed transfer before its depth is known. */
type Candidate = {
  txid: string
  to: string
  contract: string | null
  amount: string
  timestamp: number
  /** Known for TRX rows; TRC-20 rows need the receipt. */
  blockNumber: number | null
  success: boolean | null
}

/**
 * Finds confirmed incoming transfers since the cursor. Cost per run: two
 * head lookups, one listing per watched address × enabled token (plus its
 * further pages), and one receipt lookup per TRC-20 transfer not reported
 * before — never anything per open order.
 *
 * A transfer is reported once its block is solidified (newer than the
 * solid head: not yet; a TRC-20 transfer also needs its solidified
 * receipt) and its depth (head − block + 1) reaches the chain's
 * `confirmations`; until then its stream resumes from its time.
 *
 * The listings include unsolidified rows (only_confirmed is not sent):
 * those and the solidified ones not yet deep enough are returned as
 * `unconfirmed`, for the payer's "payment seen" state only. Extra cost:
 * none for the listings; one full-node receipt lookup per unsolidified
 * TRC-20 transfer to a watched address per run (about a minute of runs
 * per payment until it solidifies).
 */
export async function scanTron(context: ScanContext): Promise<ScanResult> {
  const client = new TronGridClient(context.rpc, context.rpc.apiKey)
  const cursor = readCursor(context.cursor, context.startTime - FIRST_SCAN_MARGIN_MS)
  const [head, solid] = await Promise.all([client.nowBlock(false), client.nowBlock(true)])
  // Everything up to the solid head is final on the node; the next run
  // lists again from a while before it (OVERLAP_MS) for the index's delay.
  const since = Math.max(cursor.since, solid.timestamp - OVERLAP_MS)
  // Two endpoints of the pool may disagree a little; never count below the solid head.
  const headNumber = Math.max(head.number, solid.number)

  const transfers: ObservedTransfer[] = []
  const unconfirmed: ObservedTransfer[] = []
  const reported = { ...cursor.reported }
  const lagging: Record<string, number> = {}
  const receipts = new Map<string, Promise<TronTransactionInfo | null>>()
  const recentReceipts = new Map<string, Promise<TronTransactionInfo | null>>()
  let caughtUp = true

  for (const stream of streamsOf(context)) {
    const from = cursor.lagging[stream.key] ?? cursor.since
    const listing = await listStream(client, stream, from)
    let next = since
    if (!listing.complete) {
      caughtUp = false
      next = Math.min(next, resumeAfter(listing.lastTimestamp, from, stream))
    }
    for (const candidate of listing.candidates) {
      const key = reportKey(candidate.txid, candidate.to, candidate.contract)
      // Reported by an earlier run (the core has it); two transfers of one
      // transaction found in this run are both reported.
      if (cursor.reported[key] !== undefined) continue
      // A block newer than the solid head is not solidified: no solidified receipt to ask for.
      const solidified = candidate.timestamp <= solid.timestamp
      const transfer = solidified ? await confirm(client, receipts, candidate, headNumber, solid.number) : null
      if (!transfer || transfer.confirmations < context.chain.confirmations) {
        next = Math.min(next, candidate.timestamp)
        const seen = transfer ?? (await unsolidified(client, recentReceipts, candidate, headNumber))
        if (seen?.success) unconfirmed.push(seen)
        continue
      }
      transfers.push(transfer)
      reported[key] = candidate.timestamp
    }
    if (next < since) lagging[stream.key] = next
  }

  const oldest = Math.min(since, ...Object.values(lagging))
  const nextCursor: TronScanCursor = { since, lagging, reported: pruneReported(reported, oldest) }
  // A stream cut short at its page bound did not reach its newest rows: no unconfirmed picture this run.
  return { transfers, unconfirmed: caughtUp ? unconfirmed : undefined, cursor: nextCursor, caughtUp }
}

function streamsOf(context: ScanContext): Stream[] {
  const streams: Stream[] = []
  for (const address of context.addresses) {
    for (const token of context.tokens) {
      streams.push({ key: `${address}|${token.contract ?? 'TRX'}`, address, token })
    }
  }
  return streams
}

/**
 * Where an unfinished stream resumes: at the last time it saw (rows of that
 * block come again and are skipped as reported). Should a whole bounded run
 * hold one single timestamp (1,000 transfers to one address in one block),
 * it moves on by a millisecond rather than read the same pages forever.
 */
function resumeAfter(lastTimestamp: number, from: number, stream: Stream) {
  if (lastTimestamp > from) return lastTimestamp
  logger.warn({ stream: stream.key, at: from }, 'TRON scan: one block holds more transfers than a run reads; skipping on')
  return from + 1
}

async function listStream(client: TronGridClient, stream: Stream, from: number) {
  const candidates: Candidate[] = []
  let fingerprint: string | null = null
  let lastTimestamp = from
  for (let page = 0; page < MAX_PAGES_PER_STREAM; page++) {
    if (stream.token.contract === null) {
      const result = await client.incomingTransactions(stream.address, from, fingerprint)
      for (const row of result.rows) {
        lastTimestamp = Math.max(lastTimestamp, row.block_timestamp ?? lastTimestamp)
        const candidate = trxCandidate(row, stream)
        if (candidate) candidates.push(candidate)
      }
      fingerprint = result.fingerprint
    } else {
      const result = await client.incomingTrc20(stream.address, stream.token.contract, from, fingerprint)
      for (const row of result.rows) {
        lastTimestamp = Math.max(lastTimestamp, row.block_timestamp)
        const candidate = trc20Candidate(row, stream)
        if (candidate) candidates.push(candidate)
      }
      fingerprint = result.fingerprint
    }
    if (!fingerprint) return { candidates, complete: true, lastTimestamp }
  }
  return { candidates, complete: false, lastTimestamp }
}

function trc20Candidate(row: Trc20TransferRow, stream: Stream): Candidate | null {
  // only_to and contract_address already filter; checked again so that a
  // misbehaving index never credits another token or address.
  if (row.type !== 'Transfer' || row.to !== stream.address) return null
  if (row.token_info?.address !== undefined && row.token_info.address !== stream.token.contract) return null
  if (!/^\d+$/.test(row.value) || !/^[0-9a-fA-F]{64}$/.test(row.transaction_id) || !Number.isSafeInteger(row.block_timestamp)) {
    throw new Error(`TronGrid listed a malformed TRC-20 row: ${JSON.stringify(row).slice(0, 300)}`)
  }
  return {
    txid: row.transaction_id.toLowerCase(),
    to: stream.address,
    contract: stream.token.contract,
    amount: fromBaseUnits(row.value, stream.token.decimals),
    timestamp: row.block_timestamp,
    blockNumber: null,
    success: null,
  }
}

function trxCandidate(row: TronTransaction, stream: Stream): Candidate | null {
  const call = row.raw_data?.contract?.[0]
  // TRC-20 calls, TRC-10 assets and other contracts also list here.
  if (call?.type !== 'TransferContract') return null
  // A failed transfer moved nothing.
  if (row.ret?.[0]?.contractRet !== 'SUCCESS') return null
  const { to_address: to, amount } = call.parameter.value as { to_address?: string; amount?: number | string }
  if (typeof to !== 'string' || tronAddressFromAny(to) !== stream.address) return null
  if (!/^\d+$/.test(String(amount)) || !/^[0-9a-fA-F]{64}$/.test(row.txID) || !Number.isSafeInteger(row.block_timestamp)) {
    throw new Error(`TronGrid listed a malformed TRX transfer: ${JSON.stringify(row).slice(0, 300)}`)
  }
  return {
    txid: row.txID.toLowerCase(),
    to: stream.address,
    contract: null,
    amount: fromBaseUnits(String(amount), stream.token.decimals),
    timestamp: row.block_timestamp!,
    blockNumber: Number.isSafeInteger(row.blockNumber) ? row.blockNumber! : null,
    success: true,
  }
}

/**
 * Gives a listed transfer its depth: TRC-20 rows carry no block number, so
 * the solidified receipt is read (once per transaction per run). A receipt
 * the solidity node does not have yet means "not yet": the caller keeps
 * the stream's place.
 */
async function confirm(
  client: TronGridClient,
  receipts: Map<string, Promise<TronTransactionInfo | null>>,
  candidate: Candidate,
  headNumber: number,
  solidNumber: number
): Promise<ObservedTransfer | null> {
  let blockNumber = candidate.blockNumber
  let success = candidate.success
  if (blockNumber === null || success === null) {
    if (!receipts.has(candidate.txid)) receipts.set(candidate.txid, client.transactionInfo(candidate.txid, true))
    const info = await receipts.get(candidate.txid)!
    if (!info) return null
    blockNumber = info.blockNumber
    success = success ?? receiptSucceeded(info)
  }
  // The listing includes unsolidified rows: a block above the solid head is not final yet.
  if (blockNumber > solidNumber) return null
  return {
    reference: candidate.txid,
    to: candidate.to,
    contract: candidate.contract,
    amount: candidate.amount,
    timestamp: candidate.timestamp,
    confirmations: Math.max(0, headNumber - blockNumber + 1),
    success,
  }
}

function receiptSucceeded(info: TronTransactionInfo) {
  return info.result !== 'FAILED' && (info.receipt?.result ?? 'SUCCESS') === 'SUCCESS'
}

/**
 * A listed transfer whose block is not solidified yet, with its depth as
 * the full node sees it (TRC-20 rows carry no block number: the node's
 * receipt, once per transaction per run). Null when the node does not
 * have it (yet, or any more).
 */
async function unsolidified(
  client: TronGridClient,
  receipts: Map<string, Promise<TronTransactionInfo | null>>,
  candidate: Candidate,
  headNumber: number
): Promise<ObservedTransfer | null> {
  let blockNumber = candidate.blockNumber
  let success = candidate.success
  if (blockNumber === null || success === null) {
    if (!receipts.has(candidate.txid)) receipts.set(candidate.txid, client.transactionInfo(candidate.txid, false))
    const info = await receipts.get(candidate.txid)!
    if (!info) return null
    blockNumber = info.blockNumber
    success = success ?? receiptSucceeded(info)
  }
  return {
    reference: candidate.txid,
    to: candidate.to,
    contract: candidate.contract,
    amount: candidate.amount,
    timestamp: candidate.timestamp,
    confirmations: Math.max(0, headNumber - blockNumber + 1),
    success,
  }
}
