import { RpcAnswerError, RpcBudgetExhaustedError, RpcHttpError } from '#chains/rpc_pool'

/**
 * What EVM endpoints answer instead of a result, read the way the pool
 * and the scan must act on it. Providers differ in status and words, so
 * the status, the JSON-RPC code and the message are all read:
 *
 * - range refusals of eth_getLogs, in HTTP 200 or as HTTP 400/413:
 *   Alchemy (-32600 "You can make eth_getLogs requests with up to a 500
 *   block range", -32602 "Log response size exceeded ... this block range
 *   should work: [0x.., 0x..]"), QuickNode (HTTP 413, -32614 "eth_getLogs
 *   is limited to a 10,000 range"), Infura and geth (-32005 "query
 *   returned more than 10000 results. Try with this block range [0x..,
 *   0x..]"), BSC and others ("exceed maximum block range: 5000"),
 *   Ankr/Polygon ("block range is too wide") ...: the caller splits.
 * - rate limits inside HTTP 200 (-32005 "limit exceeded", -32016 "over
 *   rate limit", "Too Many Requests", "request rate exceeded"): a rate
 *   limit, handled as an HTTP 429 (pacing, back-off), not an outage.
 * - HTTP 402 (Infura: the day's credits are spent): the pool holds the
 *   endpoint until 00:00 UTC.
 * - a block the node does not have (a lagging node: "unknown block",
 *   "header not found"): the answer of another moment, asked again.
 * - a method the node does not offer (traces on most providers).
 */

/** eth_getLogs over too wide a range (or too many results): split it; `width` is the provider's suggestion, when it made one. */
export class LogRangeRefusedError extends RpcAnswerError {
  constructor(
    message: string,
    readonly width: number | null
  ) {
    super(message)
  }
}

/** The node does not have the block asked for (yet: a lagging node; or no longer). */
export class MissingBlockError extends RpcAnswerError {
  constructor(
    message: string,
    /** The height it lacks, when known. */
    readonly block?: bigint
  ) {
    super(message)
  }
}

/** The node does not offer the method (e.g. debug_ / trace_ on a public endpoint). */
export class UnsupportedMethodError extends RpcAnswerError {}

type Refusal = { code: number | null; message: string }

const RANGE =
  /block range|blocks? range|range (is )?too (large|wide|big)|max(imum)? block range|limited to a [\d,.]+k? ?(block )?range|up to a [\d,.]+k? block range|query returned more than|more than [\d,]+ results|response size|too many (results|logs|blocks)|returned too many|range limit|range should work|exceeds? (the )?range/i
const RATE =
  /rate limit|too many requests|request rate|requests? per second|limit exceeded|exceeded.*(rate|requests|capacity|throughput|compute units|quota)|throttl|slow down|capacity exceeded|over rate/i
const MISSING =
  /unknown block|header not found|block not found|missing trie node|not found.*block|block.*not found|no such block|required historical state/i
const UNSUPPORTED =
  /method not found|method .* (does not exist|is not available|not supported)|not supported|unsupported method|not whitelisted|not allowed|disabled/i

/** The JSON-RPC error an HTTP error body carries (a batch: the first call's), or null. */
function bodyRefusal(body: string): Refusal | null {
  try {
    const parsed: unknown = JSON.parse(body)
    const first = Array.isArray(parsed) ? parsed.find((entry) => entry?.error) : parsed
    const error = (first as { error?: { code?: unknown; message?: unknown } } | null)?.error
    if (!error) return null
    return {
      code: typeof error.code === 'number' ? error.code : null,
      message: String(error.message ?? ''),
    }
  } catch {
    return body.trim() ? { code: null, message: body.slice(0, 500) } : null
  }
}

/** A JSON-RPC error answered in HTTP 200, as viem reports it (its class carries the code; `details` the node's words). */
function viemRefusal(error: unknown): Refusal | null {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    const candidate = cause as Error & { code?: unknown; details?: unknown }
    if (typeof candidate.code === 'number' && candidate.code < 0) {
      const details = typeof candidate.details === 'string' ? candidate.details : ''
      return { code: candidate.code, message: details || candidate.message }
    }
  }
  return null
}

function findCause<T>(error: unknown, type: abstract new (...args: any[]) => T): T | null {
  for (let cause: unknown = error; cause instanceof Error; cause = cause.cause) {
    if (cause instanceof type) return cause as T
  }
  return null
}

/** A numeric width from a provider's words: "10,000", "2K", "500". */
function number(text: string): number | null {
  const match = /^([\d,.]+)(k?)$/i.exec(text.trim())
  if (!match) return null
  const value = Number(match[1].replace(/,/g, '')) * (match[2] ? 1000 : 1)
  return Number.isSafeInteger(value) && value > 0 ? value : null
}

/**
 * The block range a refusal suggests: the range it says "should work"
 * ([0xa, 0xb]: b − a + 1 blocks) or the limit it names ("up to a 500 block
 * range", "limited to a 10,000 range", "exceed maximum block range: 5000").
 */
export function suggestedWidth(message: string): number | null {
  const pair = /\[\s*(0x[0-9a-f]+|\d+)\s*,\s*(0x[0-9a-f]+|\d+)\s*\]/i.exec(message)
  if (pair) {
    const from = BigInt(pair[1])
    const to = BigInt(pair[2])
    if (to >= from && to - from < 10_000_000n) return Number(to - from + 1n)
  }
  const named =
    /up to an? ([\d,.]+k?) block range/i.exec(message) ??
    /limited to an? ([\d,.]+k?) (?:block )?range/i.exec(message) ??
    /max(?:imum)? block range(?: is|:)?\s*([\d,.]+k?)/i.exec(message) ??
    /ranges? (?:over|above|greater than|larger than) ([\d,.]+k?) blocks/i.exec(message) ??
    /(?:range|blocks?) limit(?: of| is|:)?\s*([\d,.]+k?)/i.exec(message)
  return named ? number(named[1]) : null
}

/**
 * Turns what an EVM call threw into what the pool and the scan act on:
 * LogRangeRefusedError, MissingBlockError, UnsupportedMethodError (answers:
 * passed through the pool), RpcHttpError 429 (a rate limit, whatever status
 * carried it), or the pool's own errors (HTTP status, spent budget) as
 * they are; anything else unchanged (the pool's outage handling).
 */
export function classifyEvmError(error: unknown): unknown {
  const budget = findCause(error, RpcBudgetExhaustedError)
  if (budget) return budget
  const http = findCause(error, RpcHttpError)
  const refusal = http ? bodyRefusal(http.body) : viemRefusal(error)
  if (
    http &&
    (http.status === 429 || http.status === 402 || http.status >= 500) &&
    !(refusal && RANGE.test(refusal.message))
  ) {
    return http
  }
  if (!refusal) return http ?? error
  const words = refusal.message
  const where = http ? `HTTP ${http.status}, ` : ''
  const text = `${where}JSON-RPC ${refusal.code ?? '?'}: ${words}`
  if (RANGE.test(words) || refusal.code === -32614)
    return new LogRangeRefusedError(text, suggestedWidth(words))
  if (RATE.test(words) || refusal.code === -32016 || refusal.code === -32029) {
    return new RpcHttpError(`rate limited (${text})`, 429, http?.retryAfterMs ?? null, {
      body: http?.body ?? words,
    })
  }
  // -32001: EIP-1474's "resource not found" (anvil's answer for a block hash it does not have).
  if (MISSING.test(words) || refusal.code === -32001) return new MissingBlockError(text)
  if (refusal.code === -32601 || UNSUPPORTED.test(words)) return new UnsupportedMethodError(text)
  return http ?? error
}
