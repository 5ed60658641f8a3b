import {
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  decodeEventLog,
  decodeFunctionData,
  erc20Abi,
  getAddress,
  type PublicClient,
} from 'viem'
import {
  TransferLookupError,
  type ObservedTransfer,
  type VerificationContext,
} from '#chains/chain_family'
import { evmCall } from '#plugins/evm/evm_client'
import { fromBaseUnits } from '#support/text/money'
import { TRANSFER_EVENT, tokenOfContract } from '#plugins/evm/erc20_transfers'
import { internalTransfersOf } from '#plugins/evm/evm_traces'
import { evmOptions } from '#plugins/evm/evm_options'
import { isOwnNode } from '#chains/chain_rpc'

/** A transaction hash: 0x + 64 hex (the 0x may be left out). */
export function parseEvmReference(reference: string): `0x${string}` {
  const text = reference.trim().toLowerCase()
  const hash = text.startsWith('0x') ? text : `0x${text}`
  if (!/^0x[0-9a-f]{64}$/.test(hash)) {
    throw new TransferLookupError(
      `"${reference}" is not a transaction hash (0x followed by 64 hex characters)`
    )
  }
  return hash as `0x${string}`
}

const notFound = (error: unknown) =>
  error instanceof TransactionReceiptNotFoundError ||
  error instanceof TransactionNotFoundError ||
  /not found|could not be found/i.test((error as Error).message ?? '')

/**
 * The transfers a transaction made to anyone, in the network's tokens:
 * the native value it carried and the token Transfer events it emitted. A
 * reverted token transfer emits nothing, so its call data is decoded to say
 * "failed" rather than "transfers nothing".
 */
export async function verifyEvmReference(
  reference: string,
  context: VerificationContext
): Promise<ObservedTransfer[]> {
  const hash = parseEvmReference(reference)
  const { rpc, tokens } = context
  const call = evmCall(rpc)

  const lookup = async <T>(work: (client: PublicClient) => Promise<T>): Promise<T | null> => {
    try {
      return await call(work)
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause
      if (notFound(error) || notFound(cause)) return null
      throw error
    }
  }

  const tx = await lookup((client) => client.getTransaction({ hash }))
  if (!tx)
    throw new TransferLookupError(`transaction ${hash} was not found on ${context.chain.network}`)
  const receipt = await lookup((client) => client.getTransactionReceipt({ hash }))
  if (!receipt)
    throw new TransferLookupError(`transaction ${hash} is not mined yet (not yet confirmed)`)

  const [block, head] = await Promise.all([
    call((client) => client.getBlock({ blockNumber: receipt.blockNumber })),
    call((client) => client.getBlockNumber()),
  ])
  const base = {
    reference: hash,
    timestamp: Number(block.timestamp) * 1000,
    confirmations: Number(head - receipt.blockNumber + 1n),
    success: receipt.status === 'success',
  }
  const transfers: ObservedTransfer[] = []

  const native = tokens.find((token) => token.contract === null)
  if (native && tx.to && tx.value > 0n) {
    transfers.push({
      ...base,
      position: 'value',
      to: getAddress(tx.to),
      contract: null,
      amount: fromBaseUnits(tx.value, native.decimals),
    })
  }

  for (const [rank, log] of receipt.logs.entries()) {
    const token = tokenOfContract(tokens, log.address)
    if (!token) continue
    try {
      const event = decodeEventLog({ abi: [TRANSFER_EVENT], data: log.data, topics: log.topics })
      transfers.push({
        ...base,
        // Its rank among the transaction's logs: what the scanner names it by too.
        position: `log:${rank}`,
        to: getAddress(event.args.to),
        contract: token.contract,
        amount: fromBaseUnits(event.args.value, token.decimals),
      })
    } catch {
      // another event of the token contract
    }
  }

  // Native coin a contract sent (a disperse contract, a forwarder), where the node offers traces.
  if (native && base.success) {
    try {
      const traces =
        evmOptions(context.chain).traces ??
        (rpc.urls.length > 0 && rpc.urls.every(isOwnNode) ? 'auto' : 'off')
      for (const internal of (await internalTransfersOf(call, traces, hash)) ?? []) {
        transfers.push({
          ...base,
          position: `trace:${internal.path}`,
          to: internal.to,
          contract: null,
          amount: fromBaseUnits(internal.value, native.decimals),
        })
      }
    } catch {
      // No traces of this transaction now: its own value and logs are all this lookup can tell.
    }
  }

  if (!base.success && tx.to && tokenOfContract(tokens, tx.to)) {
    try {
      const intended = decodeFunctionData({ abi: erc20Abi, data: tx.input })
      if (intended.functionName === 'transfer') {
        const [recipient, value] = intended.args as [`0x${string}`, bigint]
        const token = tokenOfContract(tokens, tx.to)!
        transfers.push({
          ...base,
          // A reverted call left no log; it pays nothing (success false) and is named by its call.
          position: 'call',
          to: getAddress(recipient),
          contract: token.contract,
          amount: fromBaseUnits(value, token.decimals),
        })
      }
    } catch {
      // not a plain transfer call
    }
  }
  return transfers
}
