import { HttpStub } from '#tests/helpers/http_stub'
import { jsonParsedTransaction } from '#tests/helpers/solana/json_parsed_view'
import type { RecordedTransaction, SolanaTestChain } from '#tests/helpers/solana/solana_test_chain'

type Commitment = 'processed' | 'confirmed' | 'finalized'

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string
  ) {
    super(message)
  }
}

/**
 * A Solana JSON-RPC node on 127.0.0.1 serving a SolanaTestChain: what the
 * real @solana/kit client asks for payments (getSignaturesForAddress,
 * getTransaction jsonParsed, getSignatureStatuses, getSlot,
 * getLatestBlockhash), with the commitment levels honoured. `down` makes it
 * answer HTTP 503, like an overloaded public endpoint.
 */
export class SolanaRpcServer extends HttpStub {
  chain!: SolanaTestChain
  down = false
  /** Signatures served as a transaction of a newer version (answered with error -32015 for version 0 clients). */
  newerVersion = new Set<string>()
  calls: { method: string; params: unknown[] }[] = []

  constructor() {
    super()
    this.handler = (_request, response, body) => {
      if (this.down) {
        response.writeHead(503, { 'content-type': 'text/plain' })
        return response.end('unavailable')
      }
      let id: unknown = null
      let payload: unknown
      try {
        const request = JSON.parse(body)
        id = request.id
        this.calls.push({ method: request.method, params: request.params ?? [] })
        payload = { jsonrpc: '2.0', id, result: this.#answer(request.method, request.params ?? []) }
      } catch (error) {
        const code = error instanceof RpcError ? error.code : -32603
        payload = { jsonrpc: '2.0', id, error: { code, message: (error as Error).message } }
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(payload))
    }
  }

  serve(chain: SolanaTestChain) {
    this.chain = chain
    this.down = false
    this.newerVersion = new Set()
    this.calls = []
    return this
  }

  count(method: string) {
    return this.calls.filter((call) => call.method === method).length
  }

  #answer(method: string, params: any[]): unknown {
    switch (method) {
      case 'getSignaturesForAddress':
        return this.#signaturesForAddress(params[0], params[1] ?? {})
      case 'getTransaction':
        return this.#transaction(params[0], params[1] ?? {})
      case 'getSignatureStatuses':
        return this.#signatureStatuses(params[0] ?? [])
      case 'getSlot':
        return this.#tip(this.#commitment(params[0]))
      case 'getLatestBlockhash':
        return {
          context: { slot: this.chain.slot },
          value: { blockhash: String(this.chain.svm.latestBlockhash()), lastValidBlockHeight: this.chain.slot + 150 },
        }
      default:
        throw new RpcError(-32601, 'Method not found')
    }
  }

  /** The node's default is finalized; @solana/kit sends its own (confirmed) unless told. */
  #commitment(config: { commitment?: Commitment } | undefined): Commitment {
    return config?.commitment ?? 'finalized'
  }

  #tip(commitment: Commitment) {
    if (commitment === 'finalized') return this.chain.finalizedSlot
    if (commitment === 'confirmed') return this.chain.confirmedSlot
    return this.chain.slot
  }

  #status(record: RecordedTransaction): Commitment {
    if (record.slot <= this.chain.finalizedSlot) return 'finalized'
    if (record.slot <= this.chain.confirmedSlot) return 'confirmed'
    return 'processed'
  }

  #visible(commitment: Commitment) {
    const tip = this.#tip(commitment)
    return this.chain.records.filter((record) => record.slot <= tip)
  }

  #signaturesForAddress(
    address: string,
    config: { limit?: number; before?: string; until?: string; commitment?: Commitment }
  ) {
    const commitment = this.#commitment(config)
    if (commitment === 'processed') throw new RpcError(-32602, 'Method does not support commitment below `confirmed`')
    const limit = config.limit ?? 1000
    if (limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid limit; max 1000')
    let list = this.#visible(commitment)
      .filter((record) => record.accountKeys.some((key) => key.pubkey === address))
      .reverse()
    if (config.before) {
      const index = list.findIndex((record) => record.signature === config.before)
      list = index === -1 ? [] : list.slice(index + 1)
    }
    if (config.until) {
      const index = list.findIndex((record) => record.signature === config.until)
      if (index !== -1) list = list.slice(0, index)
    }
    return list.slice(0, limit).map((record) => ({
      signature: record.signature,
      slot: record.slot,
      err: record.err,
      memo: null,
      blockTime: record.blockTime,
      confirmationStatus: this.#status(record),
    }))
  }

  #transaction(signature: string, config: { encoding?: string; commitment?: Commitment; maxSupportedTransactionVersion?: number }) {
    const commitment = this.#commitment(config)
    if (commitment === 'processed') throw new RpcError(-32602, 'Method does not support commitment below `confirmed`')
    if (config.encoding !== 'jsonParsed') throw new RpcError(-32602, 'this test node serves encoding jsonParsed only')
    const record = this.#visible(commitment).find((entry) => entry.signature === signature)
    if (!record) return null
    const version = this.newerVersion.has(signature) ? 1 : 0
    if (config.maxSupportedTransactionVersion === undefined || config.maxSupportedTransactionVersion < version) {
      throw new RpcError(
        -32015,
        `Transaction version (${version}) is not supported by the requesting client. ` +
          `Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`
      )
    }
    return jsonParsedTransaction(record)
  }

  #signatureStatuses(signatures: string[]) {
    return {
      context: { slot: this.chain.slot },
      value: signatures.map((signature) => {
        const record = this.chain.find(signature)
        if (!record) return null
        const status = this.#status(record)
        return {
          slot: record.slot,
          confirmations: status === 'finalized' ? null : Math.max(0, this.chain.slot - record.slot),
          err: record.err,
          status: record.err === null ? { Ok: null } : { Err: record.err },
          confirmationStatus: status,
        }
      }),
    }
  }
}
