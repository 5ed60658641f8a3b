import { sha256 } from '@noble/hashes/sha2'
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils'

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
}

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
    return { since: start, lagging: {}, reported: {}, deepDoneAt: start, deep: null }
  }
  return {
    since: value.since!,
    lagging: numbersOnly(value.lagging),
    reported: numbersOnly(value.reported),
    // Cursors written before deep re-scans: one starts at the next run.
    deepDoneAt: Number.isSafeInteger(value.deepDoneAt) ? value.deepDoneAt! : 0,
    deep: readDeep(value.deep),
  }
}

function readDeep(value: unknown): DeepPass | null {
  const deep = value as Partial<DeepPass> | null
  if (!deep || typeof deep !== 'object' || !Number.isSafeInteger(deep.startedAt) || !Number.isSafeInteger(deep.until)) {
    return null
  }
  return { startedAt: deep.startedAt!, until: deep.until!, from: numbersOnly(deep.from) }
}

function numbersOnly(value: unknown): Record<string, number> {
  const result: Record<string, number> = {}
  if (!value || typeof value !== 'object') return result
  for (const [key, entry] of Object.entries(value)) if (Number.isSafeInteger(entry)) result[key] = entry as number
  return result
}

/**
 * Short stable key of one reported transfer (96 bits of a hash keeps the
 * persisted cursor small; a collision would at worst hide a transfer that
 * the same transaction id already reported to the same address).
 */
export function reportKey(txid: string, to: string, contract: string | null): string {
  return bytesToHex(sha256(utf8ToBytes(`${txid}:${to}:${contract ?? 'TRX'}`))).slice(0, 24)
}

/** Keeps the reported transfers at or after `oldest` (the earliest next listing), newest first, bounded. */
export function pruneReported(reported: Record<string, number>, oldest: number): Record<string, number> {
  const kept = Object.entries(reported)
    .filter(([, time]) => time >= oldest)
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_REPORTED)
  return Object.fromEntries(kept)
}
