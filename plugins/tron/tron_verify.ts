import {
  TransferLookupError,
  type ObservedTransfer,
  type VerificationContext,
} from '#chains/chain_family'
import { parseTransactionId } from '#plugins/tron/tron_reference'
import { transfersOf } from '#plugins/tron/tron_transfers'
import { TronGridClient } from '#plugins/tron/trongrid_client'

/**
 * Reads what a transaction id did, for submit-tx-hash and orders:mark-paid.
 *
 * Confirmation rule (the same as the scanner's): a transfer counts only
 * once its block is solidified — TRON's finality, reached when 2/3 of the
 * 27 super representatives built on it (≈19 blocks, ≈1 minute). A
 * solidified transfer reports `head − block + 1` confirmations (its true
 * depth, ≥ 19 or so); one in a block that is not solidified yet reports 0,
 * whatever its depth, so the core answers "not yet confirmed" unless the
 * operator set 0 confirmations.
 */
export async function verifyTronReference(
  reference: string,
  context: VerificationContext
): Promise<ObservedTransfer[]> {
  const txid = parseTransactionId(reference)
  const client = new TronGridClient(context.rpc, context.rpc.apiKey)

  const solidInfo = await client.transactionInfo(txid, true)
  if (solidInfo) {
    const [transaction, head] = await Promise.all([
      client.transaction(txid, true),
      client.nowBlock(false),
    ])
    if (!transaction)
      throw new TransferLookupError(
        `transaction ${txid} is not available from the node yet, try again`
      )
    const confirmations = Math.max(0, head.number - solidInfo.blockNumber + 1)
    return transfersOf(transaction, solidInfo, context.tokens, {
      reference: txid,
      timestamp: solidInfo.blockTimeStamp,
      confirmations,
    })
  }

  // Not solidified: in a recent block (facts with 0 confirmations, so the
  // payer also learns about a wrong recipient or amount now), or unknown.
  const info = await client.transactionInfo(txid, false)
  if (!info) {
    throw new TransferLookupError(
      `transaction ${txid} not found on TRON (if it was just sent, try again in a minute)`
    )
  }
  const transaction = await client.transaction(txid, false)
  if (!transaction) throw new TransferLookupError(`transaction ${txid} is not yet confirmed`)
  return transfersOf(transaction, info, context.tokens, {
    reference: txid,
    timestamp: info.blockTimeStamp,
    confirmations: 0,
  })
}
