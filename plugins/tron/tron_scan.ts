import logger from '@adonisjs/core/services/logger'
import type {
  ObservedTransfer,
  ScanContext,
  ScanResult,
  SeenAmount,
  UnreadableTransfer,
} from '#chains/chain_family'
import { redactSecrets } from '#support/http/redaction'
import { tronOptions, type TronOptions } from '#plugins/tron/tron_options'
import {
  isFreshCursor,
  pruneReported,
  readCursor,
  reportKey,
  type DeepPass,
  type TronScanCursor,
} from '#plugins/tron/tron_scan_cursor'
import {
  AlikeCounter,
  readTrc20Row,
  readTrxRow,
  rowTime,
  type Candidate,
  type RowReading,
  type Stream,
} from '#plugins/tron/tron_candidates'
import { internalPosition, transferLogPosition } from '#plugins/tron/tron_transfers'
import { readTronBalances, settleHeldBalances } from '#plugins/tron/tron_balances'
import {
  TronAnswerError,
  TronGridClient,
  type ListingWindow,
  type Page,
  type TronTransactionInfo,
} from '#plugins/tron/trongrid_client'

/** First scan: block times come from producers' clocks; start a little before the oldest order. */
export const FIRST_SCAN_MARGIN_MS = 60_000
/** Pages (of 200 rows) one stream lists per run; the rest waits for the next run (caughtUp false). */
export const MAX_PAGES_PER_STREAM = 5

/** Where a listing stands after a run: `next` is its next min_timestamp; `error` when it stopped on one. */
type StreamOutcome = { next: number; complete: boolean; error?: unknown }

/**
 * Finds confirmed incoming transfers since the cursor. Cost per run: two
 * header-only head reads, one listing per watched address × enabled token
 * (plus its further pages), one receipt lookup per TRC-20 transfer not
 * reported before and not dust — never anything per open order — and,
 * every `deepScanEveryMinutes`, one deep listing per stream.
 *
 * A transfer is reported once its block is solidified (newer than the
 * solid head: not yet; a TRC-20 transfer also needs its solidified
 * receipt) and its depth (head − block + 1) reaches the chain's
 * `confirmations`; until then its stream resumes from its time.
 *
 * The listings include unsolidified rows (only_confirmed is not sent):
 * those and the solidified ones not yet deep enough are returned as
 * `unconfirmed`, for the payer's "payment seen" state only.
 *
 * A request that fails midway (rate limit, daily budget, outage) ends the
 * run with what it did: every stream resumes where it stopped (`lagging`),
 * rows already handled are not looked up again (`reported`), and the
 * result says `interrupted`. Only a failure of the head reads, before
 * anything is done, fails the run (the cursor stays as it was).
 *
 * For the balance watch every run reports `seen`: each successful
 * incoming transfer it met in a solidified block (paid on, not yet deep
 * enough, or dropped as dust), at its block time. When the core asks
 * (`readBalances`) and the run caught up, it also reads the balances
 * (tron_balances.ts). Heights are block times in ms: every listed row
 * carries its block's time, few carry its number, and along the chain
 * block times only grow, so "at or before time t" is "in block t's or an
 * earlier one".
 */
export async function scanTron(context: ScanContext): Promise<ScanResult> {
  const options = tronOptions(context.chain)
  const client = new TronGridClient(context.rpc, context.rpc.apiKey)
  const cursor = readCursor(context.cursor, context.startTime - FIRST_SCAN_MARGIN_MS)
  const [head, solid] = await Promise.all([client.nowBlock(false), client.nowBlock(true)])
  // A first scan lists everything from its start already: the first deep re-scan is one interval away.
  if (isFreshCursor(context.cursor)) cursor.deepDoneAt = solid.timestamp
  const run = new TronScanRun(context, client, cursor, {
    // Two endpoints of the pool may disagree a little; never count below the solid head.
    headNumber: Math.max(head.number, solid.number),
    solidNumber: solid.number,
    solidTimestamp: solid.timestamp,
  })
  // Everything up to the solid head is final on the node; the next run
  // lists again from `lookbackMinutes` before it, for the index's delay.
  const since = Math.max(cursor.since, solid.timestamp - options.lookbackMinutes * 60_000)

  const lagging: Record<string, number> = {}
  let caughtUp = true
  let error: unknown = null
  const streams = streamsOf(context)
  for (const stream of streams) {
    const from = cursor.lagging[stream.key] ?? cursor.since
    if (error) {
      // Not reached this run: it resumes where it stood.
      if (from !== since) lagging[stream.key] = from
      continue
    }
    const outcome = await run.list(stream, { since: from }, since)
    if (!outcome.complete && !outcome.error) caughtUp = false
    if (outcome.error) error = outcome.error
    // A stream cut short resumes where it stopped, even past `since` (else
    // it would read the same pages again); once complete it goes back to
    // the common window, look-back included.
    if (!outcome.complete || outcome.next < since) lagging[stream.key] = outcome.next
  }

  const oldestRegular = Math.min(since, ...Object.values(lagging))
  const deep = error
    ? { pass: cursor.deep, doneAt: cursor.deepDoneAt }
    : await deepScan(run, cursor, options, streams, oldestRegular)
  error ??= deep.error

  // Reported transfers are kept as far back as any listing may read again (deep re-scans included).
  const deepFrom = deep.pass ? Math.min(...Object.values(deep.pass.from)) : oldestRegular
  const keepFrom = Math.min(oldestRegular, deepFrom, deepWindowStart(run, options))
  const nextCursor: TronScanCursor = {
    since,
    lagging,
    reported: pruneReported(run.reported, keepFrom),
    deepDoneAt: deep.doneAt,
    deep: deep.pass,
  }
  const interrupted = error ? interruption(error, context) : undefined
  // A reading is held until the listings had time to show what it covers;
  // while one is held (the core keeps asking), none is taken.
  const settled = settleHeldBalances(cursor.balances ?? null, {
    incomingNear: run.incomingNear,
    caughtUp: caughtUp && !interrupted,
    solidTimestamp: solid.timestamp,
    lookbackMs: options.lookbackMinutes * 60_000,
  })
  const balances = settled.give
  nextCursor.balances =
    settled.keep ??
    (context.readBalances && !balances && !cursor.balances && caughtUp && !interrupted
      ? await readTronBalances(client, context, {
          incomingNear: run.incomingNear,
          solidTimestamp: solid.timestamp,
        })
      : null)
  return {
    transfers: run.transfers,
    // A stream cut short (page bound or interruption) did not reach its newest rows: no unconfirmed picture this run.
    unconfirmed: caughtUp && !interrupted ? run.unconfirmed : undefined,
    cursor: nextCursor,
    caughtUp: caughtUp && !interrupted,
    interrupted,
    unreadable: run.unreadable,
    dust: run.dust,
    // Listings go by time, not block: only when every listing reached the
    // solid head does the cursor cover a block number (the solid head's).
    heights: {
      head: String(run.marks.headNumber),
      scanned: caughtUp && !interrupted ? String(solid.number) : undefined,
    },
    seen: run.seen,
    ...(balances ? { balances } : {}),
  }
}

/** Start of the deep re-scan's window (the regular window when deep re-scans are off). */
function deepWindowStart(run: TronScanRun, options: TronOptions) {
  return options.deepScanHours > 0
    ? run.marks.solidTimestamp - options.deepScanHours * 3600_000
    : Number.MAX_SAFE_INTEGER
}

/**
 * Starts a deep re-scan when one is due and carries the one under way on.
 * It lists only what the regular listings no longer cover (up to just
 * before their start), so it costs one listing per stream per pass when
 * nothing is late; transfers already reported cost no lookup
 * (`reported` is kept as long as the deep window) and the core never
 * credits a reference twice.
 */
async function deepScan(
  run: TronScanRun,
  cursor: TronScanCursor,
  options: TronOptions,
  streams: Stream[],
  oldestRegular: number
): Promise<{ pass: DeepPass | null; doneAt: number; error?: unknown }> {
  let pass = cursor.deep
  const now = run.marks.solidTimestamp
  if (options.deepScanHours === 0) return { pass: null, doneAt: cursor.deepDoneAt }
  if (!pass) {
    if (now - cursor.deepDoneAt < options.deepScanEveryMinutes * 60_000)
      return { pass: null, doneAt: cursor.deepDoneAt }
    const start = deepWindowStart(run, options)
    const until = oldestRegular - 1
    pass = { startedAt: now, until, from: {} }
    for (const stream of streams) if (start <= until) pass.from[stream.key] = start
  }
  const remaining: Record<string, number> = {}
  let error: unknown
  for (const stream of streams) {
    const from = pass.from[stream.key]
    if (from === undefined) continue
    if (error) {
      remaining[stream.key] = from
      continue
    }
    const outcome = await run.list(stream, { since: from, until: pass.until }, pass.until + 1)
    if (outcome.error) error = outcome.error
    if (!outcome.complete || outcome.next <= pass.until) remaining[stream.key] = outcome.next
  }
  if (Object.keys(remaining).length === 0) return { pass: null, doneAt: pass.startedAt, error }
  return { pass: { ...pass, from: remaining }, doneAt: cursor.deepDoneAt, error }
}

function interruption(error: unknown, context: ScanContext) {
  const message = redactSecrets((error as Error)?.message || String(error), context.rpc.secrets)
  logger.warn(
    { network: context.chain.network, reason: message },
    'TRON scan interrupted; the next run resumes where it stopped'
  )
  return `stopped midway, resuming next run: ${message}`
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

type Marks = { headNumber: number; solidNumber: number; solidTimestamp: number }

/** What one run found and the lookups it already made (each receipt once per run). */
class TronScanRun {
  readonly transfers: ObservedTransfer[] = []
  readonly unconfirmed: ObservedTransfer[] = []
  readonly unreadable: UnreadableTransfer[] = []
  /** Successful incoming transfers in solidified blocks (SeenAmount), for the balance watch. */
  readonly seen: SeenAmount[] = []
  dust = 0
  readonly reported: Record<string, number>
  /** Block times of every incoming row listed this run, per "address|contract" (handled or not). */
  readonly #incoming = new Map<string, number[]>()
  readonly #receipts = new Map<string, Promise<TronTransactionInfo | null>>()
  readonly #recentReceipts = new Map<string, Promise<TronTransactionInfo | null>>()

  constructor(
    private readonly context: ScanContext,
    private readonly client: TronGridClient,
    cursor: TronScanCursor,
    readonly marks: Marks
  ) {
    this.reported = { ...cursor.reported }
  }

  /**
   * Lists one stream page by page, handling each row as it comes, so that
   * a failure leaves a precise place to resume: the time of the row that
   * could not be handled, or of the last row of the last page read (rows
   * of that time come again and are skipped as reported). `target` is
   * where the stream stands when all went through.
   */
  async list(stream: Stream, window: ListingWindow, target: number): Promise<StreamOutcome> {
    // Earliest row seen that is not final yet: the stream comes back to it.
    let pending = Number.MAX_SAFE_INTEGER
    let fingerprint: string | null = null
    let lastTimestamp = window.since
    const alike = new AlikeCounter()
    for (let page = 0; page < MAX_PAGES_PER_STREAM; page++) {
      let rows: unknown[]
      try {
        const result: Page<unknown> =
          stream.token.contract === null
            ? await this.client.incomingTransactions(stream.address, window, fingerprint)
            : await this.client.incomingTrc20(
                stream.address,
                stream.token.contract,
                window,
                fingerprint
              )
        rows = result.rows
        fingerprint = result.fingerprint
      } catch (error) {
        return { next: Math.min(pending, lastTimestamp), complete: false, error }
      }
      for (const row of rows) {
        let reading: RowReading =
          stream.token.contract === null
            ? readTrxRow(row as any, stream)
            : readTrc20Row(row as any, stream)
        if (reading && 'candidate' in reading)
          reading = { candidate: alike.number(reading.candidate) }
        try {
          const waiting = await this.#handle(reading)
          if (waiting !== null) pending = Math.min(pending, waiting)
        } catch (error) {
          const at = reading && 'candidate' in reading ? reading.candidate.timestamp : lastTimestamp
          return { next: Math.min(pending, at), complete: false, error }
        }
        lastTimestamp = Math.max(lastTimestamp, rowTime(row as any) ?? lastTimestamp)
      }
      // Only the fingerprint says whether more follows: TronGrid ends pages
      // early (fewer rows than the limit) while more rows still lead on.
      if (!fingerprint) return { next: Math.min(pending, target), complete: true }
    }
    return {
      next: Math.min(pending, this.#resumeAfter(lastTimestamp, window.since, stream)),
      complete: false,
    }
  }

  /**
   * Whether an incoming row of a watched address and token was listed this
   * run with a block time in (`after`, `upTo`]: a balance read across that
   * time could not tell whether it counts (tron_balances.ts).
   */
  readonly incomingNear = (after: number, upTo: number): boolean => {
    for (const times of this.#incoming.values())
      if (times.some((time) => time > after && time <= upTo)) return true
    return false
  }

  #noteIncoming(to: string, contract: string | null, timestamp: number) {
    const key = `${to}|${contract ?? 'TRX'}`
    const times = this.#incoming.get(key) ?? []
    times.push(timestamp)
    this.#incoming.set(key, times)
  }

  /** A successful incoming transfer of a solidified block, for the balance watch (block time as height). */
  #see(transfer: {
    reference: string
    position: string
    to: string
    contract: string | null
    amount: string
    timestamp: number
  }) {
    this.seen.push({
      reference: transfer.reference,
      position: transfer.position,
      to: transfer.to,
      contract: transfer.contract,
      amount: transfer.amount,
      height: String(transfer.timestamp),
    })
  }

  /** Handles one listed row; returns its time when its stream must come back to it (not final yet). */
  async #handle(reading: RowReading): Promise<number | null> {
    if (!reading) return null
    if ('unreadable' in reading) {
      const entry = reading.unreadable
      if (entry.timestamp > 0) this.#noteIncoming(entry.to, entry.contract, entry.timestamp)
      const key = reportKey(entry.reference, entry.to, entry.contract)
      if (this.reported[key] === undefined) this.unreadable.push(entry)
      this.reported[key] = entry.timestamp || this.marks.solidTimestamp
      return null
    }
    const candidate = reading.candidate
    this.#noteIncoming(candidate.to, candidate.contract, candidate.timestamp)
    // One key per transfer (its slot): two transfers of one transaction to
    // one address are both reported, each once, in this run or an earlier one.
    const key = reportKey(candidate.txid, candidate.to, candidate.contract, candidate.slot)
    if (this.reported[key] !== undefined) return null
    const { solidTimestamp } = this.marks
    // Dust and address poisoning: dropped before any lookup, never waited
    // for; still value that reached the address (seen once final), named
    // by its slot where only the receipt would name its position.
    if (this.context.isDust?.(candidate.contract, candidate.amount)) {
      this.dust++
      if (candidate.timestamp <= solidTimestamp)
        this.#see({
          ...candidate,
          reference: candidate.txid,
          position: candidate.position ?? candidate.slot,
        })
      return null
    }
    let transfer: ObservedTransfer | null
    try {
      // A block newer than the solid head is not solidified: no solidified receipt to ask for.
      transfer =
        candidate.timestamp <= solidTimestamp ? await this.#withDepth(candidate, true) : null
      if (transfer?.success) this.#see(transfer)
      if (!transfer || transfer.confirmations < this.context.chain.confirmations) {
        const seen = transfer ?? (await this.#withDepth(candidate, false))
        if (seen?.success) this.unconfirmed.push(seen)
        return candidate.timestamp
      }
    } catch (error) {
      if (!(error instanceof TronAnswerError)) throw error
      // The node answered, but nothing readable: recorded, never passed over.
      this.unreadable.push({
        reference: candidate.txid,
        to: candidate.to,
        contract: candidate.contract,
        timestamp: candidate.timestamp,
        reason: `receipt unreadable: ${error.message}`,
      })
      this.reported[key] = candidate.timestamp
      return null
    }
    this.transfers.push(transfer)
    this.reported[key] = candidate.timestamp
    return null
  }

  /**
   * Gives a listed transfer its depth: TRC-20 and internal rows carry no
   * block number, so the receipt is read (once per transaction per run,
   * solidified or recent view), which also tells the transfer's position.
   * Null when that view does not have it (yet, or any more); a solidified
   * view never reports a block above the solid head. A successful
   * solidified receipt without the listed transfer is an answer that
   * cannot be read (TronAnswerError): the index listed something the
   * chain did not do, and it pays nothing.
   */
  async #withDepth(candidate: Candidate, solid: boolean): Promise<ObservedTransfer | null> {
    let blockNumber = candidate.blockNumber
    let success = candidate.success
    let position = candidate.position
    if (blockNumber === null || success === null || position === null) {
      const cache = solid ? this.#receipts : this.#recentReceipts
      if (!cache.has(candidate.txid))
        cache.set(candidate.txid, this.client.transactionInfo(candidate.txid, solid))
      const info = await cache.get(candidate.txid)!
      if (!info) return null
      blockNumber = info.blockNumber
      const succeeded = receiptSucceeded(info)
      if (position === null) {
        const found = this.#positionIn(info, candidate)
        if (found) {
          position = found.position
          success = success ?? (succeeded && !found.rejected)
        } else if (!succeeded && candidate.internalId === undefined) {
          // A reverted call leaves no log: named by its call, it pays nothing.
          position = 'call'
          success = false
        } else if (solid) {
          throw new TronAnswerError(
            `the receipt of ${candidate.txid} has no ${candidate.internalId === undefined ? 'Transfer log' : 'internal transaction'} ` +
              `of ${candidate.amount} to ${candidate.to} (${candidate.slot}) although TronGrid lists one`
          )
        } else {
          return null
        }
      }
      success ??= succeeded
    }
    if (solid && blockNumber > this.marks.solidNumber) return null
    return {
      reference: candidate.txid,
      position,
      to: candidate.to,
      contract: candidate.contract,
      amount: candidate.amount,
      timestamp: candidate.timestamp,
      confirmations: Math.max(0, this.marks.headNumber - blockNumber + 1),
      success,
    }
  }

  /** Where the listed transfer is in its receipt: its log (TRC-20) or internal transaction (TRX from a contract). */
  #positionIn(
    info: TronTransactionInfo,
    candidate: Candidate
  ): { position: string; rejected: boolean } | null {
    if (candidate.baseUnits === undefined) return null
    if (candidate.internalId !== undefined) {
      return internalPosition(
        info,
        candidate.to,
        candidate.baseUnits,
        candidate.internalId,
        candidate.occurrence
      )
    }
    if (candidate.contract === null) return null
    const position = transferLogPosition(
      info,
      candidate.contract,
      candidate.to,
      candidate.baseUnits,
      candidate.occurrence
    )
    return position ? { position, rejected: false } : null
  }

  /**
   * Where a stream cut at its page bound resumes: at the last time it saw.
   * Should a whole bounded run hold one single timestamp (1,000 transfers
   * to one address in one block), it moves on by a millisecond rather than
   * read the same pages forever.
   */
  #resumeAfter(lastTimestamp: number, from: number, stream: Stream) {
    if (lastTimestamp > from) return lastTimestamp
    logger.warn(
      { stream: stream.key, at: from },
      'TRON scan: one block holds more transfers than a run reads; skipping on'
    )
    return from + 1
  }
}

function receiptSucceeded(info: TronTransactionInfo) {
  return info.result !== 'FAILED' && (info.receipt?.result ?? 'SUCCESS') === 'SUCCESS'
}
