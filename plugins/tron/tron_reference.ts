import { TransferLookupError } from '#chains/chain_family'

const TRANSACTION_ID = /^(?:0[xX])?([0-9a-fA-F]{64})$/

/**
 * A TRON transaction reference is its id: the sha256 of the raw data, 64
 * hex characters. Wallets and explorers show it bare and lower-case; some
 * tools add "0x" or use upper case, so both are accepted. The canonical form
 * (what block_transaction_id keeps) is bare lower-case hex.
 */
export function parseTransactionId(reference: string): string {
  const match = TRANSACTION_ID.exec(reference.trim())
  if (!match) {
    throw new TransferLookupError(
      `"${reference.slice(0, 100)}" is not a TRON transaction id: expected 64 hex characters (optionally 0x-prefixed)`
    )
  }
  return match[1].toLowerCase()
}
