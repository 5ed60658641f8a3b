/**
 * What the core asks of a chain family plugin (plugins/evm, plugins/tron,
 * plugins/solana, plugins/ton). The core itself knows no chain.
 *
 * Scanning, transaction verification and payment URIs join this interface
 * with the chain watchers.
 */
export class InvalidAddressError extends Error {}

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
}
