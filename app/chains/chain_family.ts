import type Chain from '#models/chain'
import type Token from '#models/token'
import type Order from '#models/order'

/**
 * What the core asks of a chain family plugin (plugins/evm, plugins/tron,
 * plugins/solana, plugins/ton). The core itself knows no chain.
 */
export class InvalidAddressError extends Error {}

/** A reference that cannot be looked up (not found, malformed, node down). */
export class TransferLookupError extends Error {}

/** One transfer a transaction made, as read from the chain. */
export type ObservedTransfer = {
  /** Canonical reference of the transaction (what block_transaction_id keeps). */
  reference: string
  /** Recipient, in the form the family stores addresses. */
  to: string
  /** Token contract in stored form; null for the native coin. */
  contract: string | null
  /** Amount in token units, as a decimal string. */
  amount: string
  /** Block time, epoch milliseconds. */
  timestamp: number
  confirmations: number
  /** False when the transaction failed / reverted / bounced. */
  success: boolean
}

export type VerificationContext = { chain: Chain; tokens: Token[]; order: Order }

export interface ChainFamily {
  /** Family name stored on `chains.family` (evm, tron, solana, ton). */
  readonly name: string

  /** Human description of a valid address, for error messages. */
  readonly addressFormat: string

  /**
   * Validates a receiving address and returns its canonical form (EVM:
   * EIP-55 checksum; TON: user-friendly non-bounceable). Throws
   * InvalidAddressError with a message an operator can act on.
   */
  normalizeAddress(address: string): string

  /** Same for a token contract / mint / jetton master address. */
  normalizeContract(contract: string): string

  /**
   * Looks a transaction reference up on chain and returns the transfers it
   * made (submit-tx-hash, orders:mark-paid). Throws TransferLookupError when
   * it cannot. The core checks recipient, token, amount, time and
   * confirmations against the order.
   */
  verifyReference?(reference: string, context: VerificationContext): Promise<ObservedTransfer[]>
}
