import { isSignature } from '@solana/kit'
import {
  TransferLookupError,
  type ObservedTransfer,
  type VerificationContext,
} from '#chains/chain_family'
import {
  commitmentFor,
  confirmationsAt,
  type SolanaCommitment,
} from '#plugins/solana/solana_commitment'
import type { SolanaRpc } from '#plugins/solana/solana_rpc'
import {
  tokenAccountOwners,
  blockTimeMs,
  readTransfers,
  succeeded,
  UnreadableTransactionError,
} from '#plugins/solana/solana_transfers'

/**
 * Reads every transfer a transaction made, by its signature (base58 of 64
 * bytes: the canonical reference). The core then checks recipient, token,
 * amount, time and confirmations against the order.
 *
 * When finalization is required, the finalized ledger is asked first; a
 * transaction only confirmed comes back with the confirmations of that
 * level (so the core answers "not yet confirmed"). A transaction not even
 * confirmed is "not found".
 */
export async function verifySolanaReference(
  reference: string,
  context: VerificationContext,
  rpc: SolanaRpc
): Promise<ObservedTransfer[]> {
  const signature = reference.trim()
  if (!isSignature(signature)) {
    throw new TransferLookupError(
      `"${reference}" is not a Solana transaction signature (base58 text of 64 bytes)`
    )
  }
  const required = context.chain.confirmations
  let status: SolanaCommitment = 'confirmed'
  let transaction = null
  if (commitmentFor(required) === 'finalized') {
    transaction = await rpc.transaction(signature, 'finalized')
    if (transaction) status = 'finalized'
  }
  transaction ??= await rpc.transaction(signature, 'confirmed')
  if (!transaction) {
    throw new TransferLookupError(
      `transaction ${signature} not found on ${context.chain.network} (or not yet confirmed)`
    )
  }
  const timestamp = blockTimeMs(transaction)
  if (timestamp === null)
    throw new TransferLookupError(`the node does not know the block time of ${signature}`)

  const success = succeeded(transaction)
  const confirmations = confirmationsAt(status, required)
  const owners = tokenAccountOwners(transaction)
  let transfers
  try {
    transfers = readTransfers(transaction, owners)
  } catch (error) {
    if (!(error instanceof UnreadableTransactionError)) throw error
    throw new TransferLookupError(
      `transaction ${signature} cannot be read with confidence: ${error.message}`
    )
  }
  return transfers.map((transfer) => ({
    ...transfer,
    reference: signature,
    timestamp,
    confirmations,
    success,
  }))
}
