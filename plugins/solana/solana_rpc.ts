import {
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
  createSolanaRpc,
  isSolanaError,
  type Address,
  type Signature,
} from '@solana/kit'
import { TransferLookupError } from '#chains/chain_family'
import type { RpcPool } from '#chains/rpc_pool'
import type { SolanaCommitment } from '#plugins/solana/solana_commitment'
import type { JsonParsedTransaction } from '#plugins/solana/solana_transfers'

type KitRpc = ReturnType<typeof createSolanaRpc>

/** One @solana/kit client per endpoint URL, kept for the process. */
const clients = new Map<string, KitRpc>()

function clientFor(url: string): KitRpc {
  let client = clients.get(url)
  if (!client) {
    client = createSolanaRpc(url)
    clients.set(url, client)
  }
  return client
}

export type SignatureInfo = {
  signature: Signature
  slot: bigint
  blockTime: bigint | null
  err: unknown
  confirmationStatus: string | null
}

export type SignatureStatus = {
  /** Blocks built since the transaction's block was confirmed; null once finalized. */
  confirmations: number | null
  confirmationStatus: string | null
  err: unknown
}

/**
 * The JSON-RPC calls the Solana plugin makes, each through the chain's
 * failover pool (a failing endpoint is cooled down and the next one asked)
 * and with the configured timeout.
 */
export class SolanaRpc {
  constructor(private readonly pool: RpcPool) {}

  #signal() {
    return AbortSignal.timeout(this.pool.timeoutMs)
  }

  /** Signatures of transactions loading `account`, newest first. */
  signaturesForAddress(
    account: Address,
    options: { limit: number; before?: Signature; until?: Signature; commitment: SolanaCommitment }
  ): Promise<SignatureInfo[]> {
    return this.pool.call(async (url) => {
      const rows = await clientFor(url)
        .getSignaturesForAddress(account, {
          limit: options.limit,
          commitment: options.commitment,
          ...(options.before ? { before: options.before } : {}),
          ...(options.until ? { until: options.until } : {}),
        })
        .send({ abortSignal: this.#signal() })
      return rows.map((row) => ({
        signature: row.signature,
        slot: BigInt(row.slot),
        blockTime: row.blockTime === null ? null : BigInt(row.blockTime),
        err: row.err,
        confirmationStatus: row.confirmationStatus,
      }))
    })
  }

  /**
   * Where each signature stands now (null: unknown to the node, e.g.
   * dropped with its fork); at most 256 signatures a call.
   */
  signatureStatuses(signatures: Signature[]): Promise<Map<string, SignatureStatus | null>> {
    return this.pool.call(async (url) => {
      const answer = await clientFor(url).getSignatureStatuses(signatures).send({ abortSignal: this.#signal() })
      const statuses = new Map<string, SignatureStatus | null>()
      signatures.forEach((entry, index) => {
        const status = answer.value[index]
        statuses.set(
          entry,
          status
            ? {
                confirmations: status.confirmations === null ? null : Number(status.confirmations),
                confirmationStatus: status.confirmationStatus,
                err: status.err,
              }
            : null
        )
      })
      return statuses
    })
  }

  /**
   * The transaction as `jsonParsed`, or null when the node does not have it
   * at that commitment. `required` makes a null answer an endpoint failure
   * (the node listed the signature but cannot serve it: a lagging replica),
   * so that the pool asks the next endpoint. A transaction of a version
   * newer than 0 is an answer, not an endpoint failure: TransferLookupError.
   */
  transaction(
    signature: Signature,
    commitment: SolanaCommitment,
    options: { required?: boolean } = {}
  ): Promise<JsonParsedTransaction | null> {
    return this.pool.call(async (url) => {
      let found
      try {
        found = await clientFor(url)
          .getTransaction(signature, { encoding: 'jsonParsed', maxSupportedTransactionVersion: 0, commitment })
          .send({ abortSignal: this.#signal() })
      } catch (error) {
        if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION)) {
          throw new TransferLookupError(`transaction ${signature} has a version this gateway cannot read (newer than 0)`)
        }
        throw error
      }
      if (!found && options.required) throw new Error(`${url} listed ${signature} but does not return it`)
      return (found as unknown as JsonParsedTransaction | null) ?? null
    })
  }
}
