import type Chain from '#models/chain'
import { InvalidOptionsError } from '#chains/chain_family'

/** Blocks per log query when a chain names none (the former setting's default). */
export const DEFAULT_BLOCK_RANGE = 1000

export type EvmOptions = {
  /** EIP-155 chain id, written into payment URIs; absent: URIs carry none. */
  chainId?: number
  /** Blocks per log query; a range the node refuses is split. */
  blockRange: number
}

const LIMITS = {
  chainId: { min: 1, max: Number.MAX_SAFE_INTEGER },
  blockRange: { min: 1, max: 100_000 },
} as const

function integer(name: keyof typeof LIMITS, value: unknown): number {
  const text = String(value).trim()
  const parsed = /^\d+$/.test(text) ? Number(text) : Number.NaN
  const { min, max } = LIMITS[name]
  if (!Number.isSafeInteger(parsed) || parsed < min || parsed > max) {
    throw new InvalidOptionsError(`EVM option ${name} must be a whole number from ${min} to ${max}, not "${text}"`)
  }
  return parsed
}

/** Validates and normalises an EVM chain's options (chain:set --option). */
export function validateEvmOptions(options: Record<string, unknown>): Record<string, unknown> {
  const normalised: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(options)) {
    if (!(name in LIMITS)) {
      throw new InvalidOptionsError(`Unknown EVM option "${name}"; EVM options: ${Object.keys(LIMITS).join(', ')}`)
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
  }
}
