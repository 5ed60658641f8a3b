import {
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION,
  isSolanaError,
  type Address,
  type Signature,
} from '@solana/kit'
import { TransferLookupError } from '#chains/chain_family'
import { RpcAnswerError, type RpcPool } from '#chains/rpc_pool'
import type { SolanaCommitment } from '#plugins/solana/solana_commitment'
import type { JsonParsedTransaction } from '#plugins/solana/solana_transfers'
import { kitClient, type KitRpc } from '#plugins/solana/solana_transport'

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
 * The endpoint does not know a `before`/`until` signature it was given
 * (another endpoint listed it, or this one lags or was pruned). Older
 * nodes answer such a query with `[]`, which reads like the end of the
 * window; newer ones with an error. Either way this endpoint cannot page
 * from there: the pool moves on, and when no endpoint can, the scan
 * re-reads the window another way (solana_scan).
 */
export class UnknownSignatureError extends Error {
  constructor(
    readonly parameter: 'before' | 'until',
    readonly signature: string
  ) {
    super(`the endpoint does not know the ${parameter} signature ${signature}`)
  }
}

/**
 * The endpoint has not reached the slot it was asked to answer at
 * (`minContextSlot`, error -32016): it lags behind an answer the scan
 * already holds (a balance read at that slot). An answer, not an outage
 * (RpcAnswerError: passed through, the endpoint not cooled down; `endpoint`
 * names it): the caller decides what to do without it.
 */
export class ContextSlotNotReachedError extends RpcAnswerError {
  constructor(readonly minContextSlot: bigint) {
    super(`the endpoint has not reached slot ${minContextSlot} yet`)
  }
}

/** Throws ContextSlotNotReachedError when `error` is the node's -32016. */
function throwIfBehind(error: unknown, minContextSlot: bigint | undefined) {
  if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_MIN_CONTEXT_SLOT_NOT_REACHED)) {
    throw new ContextSlotNotReachedError(minContextSlot ?? 0n)
  }
}

/** A token account as getTokenAccountsByOwner (jsonParsed) describes it. */
export type OwnedTokenAccount = {
  pubkey: string
  mint: string
  owner: string
  /** Base units. */
  amount: bigint
  decimals: number
}

/** An answer as of a slot (the RPC's `context.slot`). */
export type AtSlot<T> = { slot: bigint; value: T }

/** A JSON-RPC error answer (HTTP 200), as opposed to a transport failure (RpcHttpError, timeout, network). */
function isJsonRpcError(error: unknown): boolean {
  return isSolanaError(error)
}

/**
 * The JSON-RPC calls the Solana plugin makes, each through the chain's
 * failover pool (a failing endpoint is cooled down and the next one asked)
 * and with the configured timeout. Every HTTP request waits for the pool's
 * permit first (solana_transport).
 */
export class SolanaRpc {
  readonly #clients = new Map<string, KitRpc>()

  constructor(private readonly pool: RpcPool) {}

  #client(url: string): KitRpc {
    let client = this.#clients.get(url)
    if (!client) {
      client = kitClient(this.pool, url)
      this.#clients.set(url, client)
    }
    return client
  }

  #signal() {
    return AbortSignal.timeout(this.pool.timeoutMs)
  }

  /**
   * Signatures of transactions loading `account`, newest first. The answer
   * is checked on the same endpoint before it is trusted: an empty page
   * below `before`, or an error while paging, is an unknown signature when
   * the endpoint cannot find that signature at all (UnknownSignatureError).
   */
  signaturesForAddress(
    account: Address,
    options: {
      limit: number
      before?: Signature
      until?: Signature
      commitment: SolanaCommitment
      /** Refuse to answer from a node whose `commitment` tip is below this slot (ContextSlotNotReachedError). */
      minContextSlot?: bigint
    }
  ): Promise<SignatureInfo[]> {
    return this.pool.call(async (url) => {
      const client = this.#client(url)
      let rows
      try {
        rows = await client
          .getSignaturesForAddress(account, {
            limit: options.limit,
            commitment: options.commitment,
            ...(options.before ? { before: options.before } : {}),
            ...(options.until ? { until: options.until } : {}),
            ...(options.minContextSlot !== undefined
              ? { minContextSlot: options.minContextSlot }
              : {}),
          })
          .send({ abortSignal: this.#signal() })
      } catch (error) {
        throwIfBehind(error, options.minContextSlot)
        if (isJsonRpcError(error) && (options.before || options.until))
          await this.#assertKnown(url, options)
        throw error
      }
      if (rows.length === 0 && options.before)
        await this.#assertKnown(url, { before: options.before })
      return rows.map((row) => ({
        signature: row.signature,
        slot: BigInt(row.slot),
        blockTime: row.blockTime === null ? null : BigInt(row.blockTime),
        err: row.err,
        confirmationStatus: row.confirmationStatus,
      }))
    })
  }

  /** The endpoint's answers did not hold together (it lagged): the pool's other endpoints are asked first from now on. */
  doubt(endpoint: string | undefined) {
    this.pool.doubt(endpoint)
  }

  /** How many endpoints the pool has. */
  get endpoints(): number {
    return this.pool.urls.length
  }

  /** The lamports of `account` (0 when it does not exist) as of the slot the node answered at. */
  balance(
    account: Address,
    options: { commitment: SolanaCommitment; minContextSlot?: bigint }
  ): Promise<AtSlot<bigint>> {
    return this.pool.call(async (url) => {
      try {
        const answer = await this.#client(url)
          .getBalance(account, {
            commitment: options.commitment,
            ...(options.minContextSlot !== undefined
              ? { minContextSlot: options.minContextSlot }
              : {}),
          })
          .send({ abortSignal: this.#signal() })
        return { slot: BigInt(answer.context.slot), value: BigInt(answer.value) }
      } catch (error) {
        throwIfBehind(error, options.minContextSlot)
        throw error
      }
    })
  }

  /**
   * Every token account `owner` owns for `mint` (under whichever token
   * program owns the mint: the node looks it up), with its balance, as of
   * the slot the node answered at. The mint must exist (the node refuses
   * an unknown one).
   */
  tokenAccountsByOwner(
    owner: Address,
    mint: Address,
    options: { commitment: SolanaCommitment; minContextSlot?: bigint }
  ): Promise<AtSlot<OwnedTokenAccount[]>> {
    return this.pool.call(async (url) => {
      let answer
      try {
        answer = await this.#client(url)
          .getTokenAccountsByOwner(
            owner,
            { mint },
            {
              encoding: 'jsonParsed',
              commitment: options.commitment,
              ...(options.minContextSlot !== undefined
                ? { minContextSlot: options.minContextSlot }
                : {}),
            }
          )
          .send({ abortSignal: this.#signal() })
      } catch (error) {
        throwIfBehind(error, options.minContextSlot)
        throw error
      }
      const accounts: OwnedTokenAccount[] = []
      for (const entry of answer.value) {
        const data = entry.account.data as unknown
        // jsonParsed falls back to raw data for an account the node cannot parse: not a token account we can read
        if (!data || typeof data !== 'object' || !('parsed' in data)) continue
        const parsed = (data as { parsed?: { type?: string; info?: Record<string, any> } }).parsed
        const info = parsed?.info
        if (parsed?.type !== 'account' || !info?.tokenAmount) continue
        accounts.push({
          pubkey: String(entry.pubkey),
          mint: String(info.mint),
          owner: String(info.owner),
          amount: BigInt(String(info.tokenAmount.amount)),
          decimals: Number(info.tokenAmount.decimals),
        })
      }
      return { slot: BigInt(answer.context.slot), value: accounts }
    })
  }

  /** Throws UnknownSignatureError for the first of `before`/`until` the endpoint has no status for. */
  async #assertKnown(url: string, signatures: { before?: Signature; until?: Signature }) {
    const asked = (['before', 'until'] as const).filter((parameter) => signatures[parameter])
    const answer = await this.#client(url)
      .getSignatureStatuses(
        asked.map((parameter) => signatures[parameter]!),
        { searchTransactionHistory: true }
      )
      .send({ abortSignal: this.#signal() })
    asked.forEach((parameter, index) => {
      if (!answer.value[index]) throw new UnknownSignatureError(parameter, signatures[parameter]!)
    })
  }

  /**
   * Where each signature stands now (null: unknown to the node, e.g.
   * dropped with its fork); at most 256 signatures a call.
   */
  signatureStatuses(signatures: Signature[]): Promise<Map<string, SignatureStatus | null>> {
    return this.pool.call(async (url) => {
      const answer = await this.#client(url)
        .getSignatureStatuses(signatures)
        .send({ abortSignal: this.#signal() })
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

  /** The highest slot the endpoint has reached at `commitment`. */
  slot(commitment: SolanaCommitment): Promise<bigint> {
    return this.pool.call(async (url) => {
      const slot = await this.#client(url)
        .getSlot({ commitment })
        .send({ abortSignal: this.#signal() })
      return BigInt(slot)
    })
  }

  /** The program owning an account (a mint: the Token or the Token-2022 program); null when it does not exist. */
  accountOwner(account: Address): Promise<string | null> {
    return this.pool.call(async (url) => {
      const answer = await this.#client(url)
        .getAccountInfo(account, {
          encoding: 'base64',
          dataSlice: { offset: 0, length: 0 },
          commitment: 'confirmed',
        })
        .send({ abortSignal: this.#signal() })
      return answer.value ? String(answer.value.owner) : null
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
        found = await this.#client(url)
          .getTransaction(signature, {
            encoding: 'jsonParsed',
            maxSupportedTransactionVersion: 0,
            commitment,
          })
          .send({ abortSignal: this.#signal() })
      } catch (error) {
        if (
          isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_UNSUPPORTED_TRANSACTION_VERSION)
        ) {
          throw new TransferLookupError(
            `transaction ${signature} has a version this gateway cannot read (newer than 0)`
          )
        }
        throw error
      }
      if (!found && options.required)
        throw new Error(`${url} listed ${signature} but does not return it`)
      return (found as unknown as JsonParsedTransaction | null) ?? null
    })
  }
}
