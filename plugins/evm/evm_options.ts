import type Chain from '#models/chain'
import { InvalidOptionsError, pluginReason } from '#chains/chain_family'

/** How internal transfers are read (evm_traces.ts); the chain option `traces`. */
export type TraceMode = 'auto' | 'debug' | 'parity' | 'off'
export const TRACE_MODES: readonly TraceMode[] = ['auto', 'debug', 'parity', 'off']

/** Blocks per log query when a chain names none (the former setting's default). */
export const DEFAULT_BLOCK_RANGE = 1000

/**
 * Block hashes kept behind the scan, to find where a reorganisation forked:
 * deeper than the deepest one the EVM chains have documented (Polygon PoS,
 * 157 blocks in February 2023).
 */
export const DEFAULT_REORG_DEPTH = 256

export type EvmOptions = {
  /** EIP-155 chain id, written into payment URIs; absent: URIs carry none. */
  chainId?: number
  /** Blocks per log query; a range the node refuses is split. */
  blockRange: number
  /** How far back the scan keeps block hashes to walk a reorganisation back to where it forked. */
  reorgDepth: number
  /**
   * Whether (and how) contract-sent native value is read from the node's
   * traces (evm_traces.ts). Unset: `auto` when every endpoint is the
   * operator's own node (loopback or private address), `off` otherwise:
   * providers that offer traces bill them dearly (one call per block), and
   * the balance watch tells of such value anyway.
   */
  traces: TraceMode | null
}

const LIMITS = {
  chainId: { min: 1, max: Number.MAX_SAFE_INTEGER },
  blockRange: { min: 1, max: 100_000 },
  reorgDepth: { min: 1, max: 100_000 },
} as const

const NAMES = [...Object.keys(LIMITS), 'traces']

function integer(name: keyof typeof LIMITS, value: unknown): number {
  const text = String(value).trim()
  const parsed = /^\d+$/.test(text) ? Number(text) : Number.NaN
  const { min, max } = LIMITS[name]
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new InvalidOptionsError(
      `EVM option ${name} must be a whole number from ${min} to ${max}, not "${text}"`,
      pluginReason('evm', 'option_range', { name, min, max, value: text })
    )
  }
  return parsed
}

function traceMode(value: unknown): TraceMode {
  const text = String(value).trim().toLowerCase()
  if (!(TRACE_MODES as readonly string[]).includes(text)) {
    throw new InvalidOptionsError(
      `EVM option traces must be one of ${TRACE_MODES.join(', ')}, not "${String(value).trim()}"`,
      pluginReason('evm', 'traces_mode', {
        modes: TRACE_MODES.join(', '),
        value: String(value).trim(),
      })
    )
  }
  return text as TraceMode
}

/** Validates and normalises an EVM chain's options (chain:set --option). */
export function validateEvmOptions(options: Record<string, unknown>): Record<string, unknown> {
  const normalised: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if (name === 'traces') {
      normalised.traces = traceMode(value)
      continue
    }
    if (!(name in LIMITS)) {
      throw new InvalidOptionsError(
        `Unknown EVM option "${name}"; EVM options: ${NAMES.join(', ')}`,
        pluginReason('evm', 'unknown_option', { name, names: NAMES.join(', ') })
      )
    }
    normalised[name] = integer(name as keyof typeof LIMITS, value)
  }
  return normalised
}

/** The options of a stored chain, with defaults. */
export function evmOptions(chain: Chain): EvmOptions {
  const options = chain.options ?? {}
  return {
    chainId: typeof options.chainId === 'number' ? options.chainId : undefined,
    blockRange: typeof options.blockRange === 'number' ? options.blockRange : DEFAULT_BLOCK_RANGE,
    reorgDepth: typeof options.reorgDepth === 'number' ? options.reorgDepth : DEFAULT_REORG_DEPTH,
    traces: (TRACE_MODES as readonly unknown[]).includes(options.traces)
      ? (options.traces as TraceMode)
      : null,
  }
}
