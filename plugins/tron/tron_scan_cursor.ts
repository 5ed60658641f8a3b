import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'
import type { BalanceReading } from '#chains/chain_family'

/**
 * Where the TRON scanner stands, persisted by the core as JSON after each
 * run. Times are block timestamps in epoch ms (TronGrid's min_timestamp).
 */
export type TronScanCursor = {
  /** min_timestamp of the next listing of every stream not in `lagging`. */
  since: number
  /**
   * Streams ("address|contract-or-TRX") that resume elsewhere than
   * `since`: where they stopped (page bound, rate limit, outage), or
   * earlier, at a transfer listed but not final or deep enough yet.
   */
  lagging: Record<string, number>
  /**
   * Transfers already handed to the core and still inside the listing
   * window (key → block time): listed again because of the overlap, but
   * neither looked up nor reported again.
   */
  reported: Record<string, number>
  /** Block time (solid head) at which the last deep re-scan started; 0: never. */
  deepDoneAt: number
  /** The deep re-scan under way: streams still to list (key → next min_timestamp), up to `until`. */
  deep: DeepPass | null
  /** A balance reading taken, held until the listings have had time to show what it covers (tron_balances.ts). */
  balances?: HeldBalances | null
}

/**
 * Balances read at the block of time `height` (ms), given to the core
 * once the listings have covered the look-back past it. `span`: the block
 * times over which the reading was taken (from a few blocks before its
 * block to the solid head after the reads); an incoming transfer listed
 * there, even late, voids it.
 */
export type HeldBalances = { height: number; span: [number, number]; readings: BalanceReading[] }

/**
 * A deep re-scan: lists again the last hours of every stream, up to just
 * before where the regular listings started when it began (those cover
 * the rest), for rows TronGrid indexed later than the look-back.
 */
export type DeepPass = { startedAt: number; until: number; from: Record<string, number> }

/** Entries kept in `reported` at most; dropping the oldest only means reporting them again. */
export const MAX_REPORTED = 5000

/** True when `raw` is no cursor this code wrote: the scan starts afresh. */
export function isFreshCursor(raw: unknown): boolean {
  const value = raw as Partial<TronScanCursor> | null
  return !value || typeof value !== 'object' || !Number.isSafeInteger(value.since)
}

/** The cursor the core handed back, or a fresh one starting at `start` (first scan). */
export function readCursor(raw: unknown, start: number): TronScanCursor {
  const value = raw as Partial<TronScanCursor> | null
  if (!value || isFreshCursor(value)) {
    // First scan, or a cursor this code did not write: start from the oldest
    // order worth watching (the core's start time); seeing transfers twice is harmless.
    return {
      since: start,
      lagging: {},
      reported: {},
      deepDoneAt: start,
      deep: null,
      balances: null,
    }
  }
  return {
    since: value.since!,
    lagging: numbersOnly(value.lagging),
    reported: numbersOnly(value.reported),
    // Cursors written before deep re-scans: one starts at the next run.
    deepDoneAt: Number.isSafeInteger(value.deepDoneAt) ? value.deepDoneAt! : 0,
    deep: readDeep(value.deep),
    balances: readHeldBalances(value.balances),
  }
}

function readHeldBalances(value: unknown): HeldBalances | null {
  const held = value as Partial<HeldBalances> | null
  if (!held || typeof held !== 'object' || !Number.isSafeInteger(held.height)) return null
  const span = held.span
  if (
    !Array.isArray(span) ||
    span.length !== 2 ||
    !span.every((time) => Number.isSafeInteger(time))
  )
    return null
  if (!Array.isArray(held.readings)) return null
  const readings = held.readings.filter(
    (reading) =>
      reading &&
      typeof reading.address === 'string' &&
      (reading.contract === null || typeof reading.contract === 'string') &&
      typeof reading.amount === 'string'
  )
  return { height: held.height!, span: [span[0], span[1]], readings }
}

function readDeep(value: unknown): DeepPass | null {
  const deep = value as Partial<DeepPass> | null
  if (
    !deep ||
    typeof deep !== 'object' ||
    !Number.isSafeInteger(deep.startedAt) ||
    !Number.isSafeInteger(deep.until)
  ) {
    return null
  }
  return { startedAt: deep.startedAt!, until: deep.until!, from: numbersOnly(deep.from) }
}

function numbersOnly(value: unknown): Record<string, number> {
  const result: Record<string, number> = {}
  if (!value || typeof value !== 'object') return result
  for (const [key, entry] of Object.entries(value))
    if (Number.isSafeInteger(entry)) result[key] = entry as number
  return result
}

/**
 * Short stable key of one reported transfer: its transaction, recipient,
 * token and slot (which transfer of the transaction the listing row
 * stands for, Candidate.slot), so that two transfers of one transaction
 * to one address are two keys. 96 bits of a hash keep the persisted
 * cursor small. A TRX transfer (`value`, one per transaction) and an
 * unreadable row (no slot) keep the key they had before slots existed.
 */
export function reportKey(txid: string, to: string, contract: string | null, slot = ''): string {
  const transfer = slot === '' || slot === 'value' ? '' : `:${slot}`
  return bytesToHex(sha256(utf8ToBytes(`${txid}:${to}:${contract ?? 'TRX'}${transfer}`))).slice(
    0,
    24
  )
}

/** Keeps the reported transfers at or after `oldest` (the earliest next listing), newest first, bounded. */
export function pruneReported(
  reported: Record<string, number>,
  oldest: number
): Record<string, number> {
  const kept = Object.entries(reported)
    .filter(([, time]) => time >= oldest)
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_REPORTED)
  return Object.fromEntries(kept)
}
