import { getAddress, toHex, type Hex, type PublicClient } from 'viem'
import {
  classifyEvmError,
  MissingBlockError,
  UnsupportedMethodError,
} from '#plugins/evm/evm_errors'
import type { Call } from '#plugins/evm/evm_reads'
import type { TraceMode } from '#plugins/evm/evm_options'

/**
 * Native coin a contract sends (a Safe or ERC-4337 wallet paying out, an
 * exchange's forwarder, a disperse contract) moves no log and is no
 * transaction's own value: only the node's traces show it. Two dialects:
 * geth's `debug_traceBlockByHash` with the callTracer (asked by hash: a
 * node without that very block answers an error) and Erigon/Nethermind/
 * reth's `trace_block` (each trace names its block hash, checked).
 *
 * `auto` (the default of the chain option `traces`) tries debug_ then
 * trace_ on each endpoint and remembers, for the process's life, an
 * endpoint that offers neither (most public endpoints): it costs that
 * endpoint one refused call, then nothing. `off` never asks.
 */

/** Native value a contract sent to a watched address, inside a transaction. */
export type InternalTransfer = {
  transactionHash: Hex
  /** Where in the transaction's call tree: the child indices from the top call ("0.2"). */
  path: string
  to: string
  value: bigint
}

/** What each endpoint offers, learned in this process. */
const offered = new Map<string, 'debug' | 'parity' | 'none'>()

type CallFrame = { type?: string; to?: Hex; value?: Hex; error?: string; calls?: CallFrame[] }
type ParityTrace = {
  type?: string
  action?: { callType?: string; to?: Hex; value?: Hex; refundAddress?: Hex; balance?: Hex }
  traceAddress?: number[]
  transactionHash?: Hex
  blockHash?: Hex
  error?: string
}

function request<T>(client: PublicClient, method: string, params: unknown[]): Promise<T> {
  return client.request({ method: method as any, params: params as any }) as Promise<T>
}

function valueOf(hex: Hex | undefined): bigint {
  try {
    return hex ? BigInt(hex) : 0n
  } catch {
    return 0n
  }
}

/** Moves value to its `to`: a CALL (not delegate/static: their value is the caller's own) or a self-destruct's beneficiary. */
const MOVES_VALUE = new Set(['CALL', 'SELFDESTRUCT'])

/** Which recipients are of interest: the watched addresses (a scan), or anyone (a lookup by reference). */
type Recipients = Set<string> | 'any'
const wanted = (recipients: Recipients, to: string) => recipients === 'any' || recipients.has(to)

function fromCallTracer(
  results: { txHash?: Hex; result?: CallFrame; error?: string }[],
  transactionHashes: Hex[],
  watched: Recipients
): InternalTransfer[] {
  const found: InternalTransfer[] = []
  results.forEach((entry, index) => {
    const hash = (entry.txHash ?? transactionHashes[index])?.toLowerCase() as Hex | undefined
    if (!hash || !entry.result) return
    const walk = (frame: CallFrame, path: string) => {
      // A frame that failed undid its value and everything below it.
      if (frame.error) return
      if (path !== '' && MOVES_VALUE.has(String(frame.type).toUpperCase()) && frame.to) {
        const value = valueOf(frame.value)
        const to = getAddress(frame.to)
        if (value > 0n && wanted(watched, to))
          found.push({ transactionHash: hash, path, to, value })
      }
      ;(frame.calls ?? []).forEach((child, position) =>
        walk(child, path === '' ? String(position) : `${path}.${position}`)
      )
    }
    // The top frame is the transaction itself: its value is read from the transaction.
    walk(entry.result, '')
  })
  return found
}

function fromParity(
  traces: ParityTrace[],
  blockHash: Hex | null,
  watched: Recipients
): InternalTransfer[] {
  const failed = new Set<string>()
  const key = (hash: string, address: number[]) => `${hash}:${address.join('.')}`
  for (const trace of traces) {
    if (blockHash && trace.blockHash && trace.blockHash.toLowerCase() !== blockHash.toLowerCase()) {
      throw new MissingBlockError(
        `trace_block answered for another block (${trace.blockHash}): another fork`
      )
    }
    if (trace.error && trace.transactionHash)
      failed.add(key(trace.transactionHash.toLowerCase(), trace.traceAddress ?? []))
  }
  const undone = (hash: string, address: number[]) => {
    for (let depth = 0; depth <= address.length; depth++)
      if (failed.has(key(hash, address.slice(0, depth)))) return true
    return false
  }
  const found: InternalTransfer[] = []
  for (const trace of traces) {
    const address = trace.traceAddress ?? []
    const hash = trace.transactionHash?.toLowerCase()
    if (!hash || address.length === 0 || undone(hash, address)) continue
    let to: Hex | undefined
    let value = 0n
    if (trace.type === 'call' && trace.action?.callType === 'call') {
      to = trace.action.to
      value = valueOf(trace.action.value)
    } else if (trace.type === 'suicide') {
      to = trace.action?.refundAddress
      value = valueOf(trace.action?.balance)
    }
    if (!to || value === 0n) continue
    const recipient = getAddress(to)
    if (wanted(watched, recipient))
      found.push({ transactionHash: hash as Hex, path: address.join('.'), to: recipient, value })
  }
  return found
}

/**
 * Asks the endpoint for traces in the dialect it offers: `mode` itself, or
 * (auto) what it was seen to offer, debug_ first; a dialect it refuses is
 * remembered and the next tried. Null when it offers none (auto).
 */
function traced<T>(
  call: Call,
  mode: TraceMode,
  read: (client: PublicClient, dialect: 'debug' | 'parity') => Promise<T>
) {
  if (mode === 'off') return Promise.resolve(null)
  return call(async (client, url): Promise<T | null> => {
    for (;;) {
      const dialect = mode === 'auto' ? (offered.get(url) ?? 'debug') : mode
      if (dialect === 'none') return null
      try {
        const result = await read(client, dialect)
        if (mode === 'auto') offered.set(url, dialect)
        return result
      } catch (raw) {
        const error = classifyEvmError(raw)
        if (!(error instanceof UnsupportedMethodError) || mode !== 'auto') throw error
        offered.set(url, dialect === 'debug' ? 'parity' : 'none')
      }
    }
  })
}

/**
 * The native value contracts sent to watched addresses in one block, or
 * null when the endpoint offers no traces (mode `auto`): the balance watch
 * then still tells the operator of such value (as unexplained).
 */
export function internalTransfers(
  call: Call,
  mode: TraceMode,
  block: { number: bigint; hash: Hex; transactionHashes: Hex[] },
  watched: Set<string>
): Promise<InternalTransfer[] | null> {
  return traced(call, mode, async (client, dialect) => {
    if (dialect === 'debug') {
      const results = await request<{ txHash?: Hex; result?: CallFrame }[]>(
        client,
        'debug_traceBlockByHash',
        [block.hash, { tracer: 'callTracer' }]
      )
      return fromCallTracer(results ?? [], block.transactionHashes, watched)
    }
    const traces = await request<ParityTrace[] | null>(client, 'trace_block', [toHex(block.number)])
    if (traces === null)
      throw new MissingBlockError(`the node has no traces of block ${block.number} yet`)
    return fromParity(traces, block.hash, watched)
  })
}

/**
 * The native value contracts sent inside one transaction, to anyone (a
 * reference looked up: submit-tx-hash, orders:mark-paid), with the same
 * paths as the scan's. Null when the endpoint offers no traces.
 */
export function internalTransfersOf(
  call: Call,
  mode: TraceMode,
  hash: Hex
): Promise<InternalTransfer[] | null> {
  return traced(call, mode, async (client, dialect) => {
    if (dialect === 'debug') {
      const result = await request<CallFrame>(client, 'debug_traceTransaction', [
        hash,
        { tracer: 'callTracer' },
      ])
      return fromCallTracer([{ txHash: hash, result }], [hash], 'any')
    }
    const traces = await request<ParityTrace[] | null>(client, 'trace_transaction', [hash])
    return fromParity(traces ?? [], null, 'any')
  })
}

/** Forget what endpoints offer (tests). */
export function resetTraceSupport() {
  offered.clear()
}
