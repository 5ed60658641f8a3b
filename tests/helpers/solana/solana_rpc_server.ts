import { HttpStub } from '#tests/helpers/http_stub'
import { jsonParsedTransaction } from '#tests/helpers/solana/json_parsed_view'
import { jsonParsedTokenAccount } from '#tests/helpers/solana/token_account_view'
import { TOKEN_PROGRAMS } from '#plugins/solana/solana_programs'
import type { RecordedTransaction, SolanaTestChain } from '#tests/helpers/solana/solana_test_chain'

type Commitment = 'processed' | 'confirmed' | 'finalized'

/** Requests allowed per window: per method, and overall (per IP). */
export type RateLimits = { perMethod: number; overall: number; windowMs: number }

/** The public mainnet endpoint's limits: 40 requests per 10 s for one method, 100 per 10 s in all, per IP. */
export const PUBLIC_RATE_LIMITS: RateLimits = { perMethod: 40, overall: 100, windowMs: 10_000 }

/**
 * A token bucket: `capacity` requests at once, refilled continuously over
 * `windowMs`. A refused request takes nothing.
 */
class TokenBucket {
  #tokens: number
  #at = Date.now()
  constructor(
    readonly capacity: number,
    readonly windowMs: number
  ) {
    this.#tokens = capacity
  }

  #refill() {
    const now = Date.now()
    this.#tokens = Math.min(
      this.capacity,
      this.#tokens + ((now - this.#at) * this.capacity) / this.windowMs
    )
    this.#at = now
  }

  available() {
    this.#refill()
    return this.#tokens >= 1
  }

  take() {
    this.#tokens -= 1
  }

  /** Milliseconds until one request is allowed again. */
  waitMs() {
    this.#refill()
    return Math.max(0, Math.ceil(((1 - this.#tokens) * this.windowMs) / this.capacity))
  }
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown
  ) {
    super(message)
  }
}

/** What a method's config may carry that every method here honours. */
type ContextConfig = { commitment?: Commitment; minContextSlot?: number }

/**
 * A Solana JSON-RPC node on 127.0.0.1 serving a SolanaTestChain: what the
 * real @solana/kit client asks for payments (getSignaturesForAddress,
 * getTransaction jsonParsed, getSignatureStatuses, getAccountInfo,
 * getSlot, getLatestBlockhash), with the commitment levels honoured.
 * `down` makes it answer HTTP 503, like an overloaded public endpoint.
 * `limit()` gives it the public endpoint's token buckets: over them it
 * answers HTTP 429 with the JSON-RPC error body the public endpoint sends
 * (and a Retry-After). `forgotten` signatures are unknown to this node (a
 * lagging or pruned replica): absent from its listings and statuses; a
 * `before`/`until` it does not know is answered as old nodes do (`[]`,
 * resp. ignored) or, with `unknownSignature = 'error'`, with an error as
 * newer ones do.
 */
export class SolanaRpcServer extends HttpStub {
  chain!: SolanaTestChain
  down = false
  /** Signatures served as a transaction of a newer version (answered with error -32015 for version 0 clients). */
  newerVersion = new Set<string>()
  /** Signatures this node does not have. */
  forgotten = new Set<string>()
  unknownSignature: 'empty' | 'error' = 'empty'
  /** Changes a getTransaction answer before it is sent (a node serving an odd shape). */
  rewrite: ((signature: string, answer: unknown) => unknown) | null = null
  /** Whether a 429 carries Retry-After (the public endpoint may leave it out). */
  retryAfter = true
  /** Signatures left out of getSignaturesForAddress (and only there). */
  unlisted = new Set<string>()
  /** Slots the getSignaturesForAddress answers lag behind the node's other answers. */
  listingLag = 0
  /** Slots the balance answers (getBalance, getTokenAccountsByOwner) lag behind the node's other answers. */
  balanceLag = 0
  /** Awaited before a request is answered (e.g. to land a transaction between two reads). */
  beforeAnswer: ((method: string, params: any[]) => Promise<void> | void) | null = null
  /** Requests answered (rate-limited ones excluded). */
  calls: { method: string; params: unknown[] }[] = []
  /** Requests refused with 429, by method. */
  limited: string[] = []
  #limits: RateLimits | null = null
  #buckets = new Map<string, TokenBucket>()

  constructor() {
    super()
    this.handler = async (_request, response, body) => {
      if (this.down) {
        response.writeHead(503, { 'content-type': 'text/plain' })
        return response.end('unavailable')
      }
      let id: unknown = null
      let payload: unknown
      try {
        const request = JSON.parse(body)
        if (this.beforeAnswer) await this.beforeAnswer(String(request.method), request.params ?? [])
        id = request.id
        const refusal = this.#rateLimit(String(request.method))
        if (refusal) {
          this.limited.push(String(request.method))
          const headers: Record<string, string> = { 'content-type': 'application/json' }
          if (this.retryAfter)
            headers['retry-after'] = String(Math.max(1, Math.ceil(refusal.waitMs / 1000)))
          response.writeHead(429, headers)
          return response.end(
            JSON.stringify({ jsonrpc: '2.0', error: { code: 429, message: refusal.message }, id })
          )
        }
        this.calls.push({ method: request.method, params: request.params ?? [] })
        payload = { jsonrpc: '2.0', id, result: this.#answer(request.method, request.params ?? []) }
      } catch (error) {
        const code = error instanceof RpcError ? error.code : -32603
        const data =
          error instanceof RpcError && error.data !== undefined ? { data: error.data } : {}
        payload = {
          jsonrpc: '2.0',
          id,
          error: { code, message: (error as Error).message, ...data },
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify(payload))
    }
  }

  serve(chain: SolanaTestChain) {
    this.chain = chain
    this.down = false
    this.newerVersion = new Set()
    this.forgotten = new Set()
    this.unknownSignature = 'empty'
    this.retryAfter = true
    this.rewrite = null
    this.unlisted = new Set()
    this.listingLag = 0
    this.balanceLag = 0
    this.beforeAnswer = null
    this.calls = []
    this.limited = []
    this.#limits = null
    this.#buckets.clear()
    return this
  }

  /** Token-bucket limits from now on (null: none). */
  limit(limits: RateLimits | null) {
    this.#limits = limits
    this.#buckets.clear()
    return this
  }

  #bucket(key: string, capacity: number, windowMs: number) {
    let bucket = this.#buckets.get(key)
    if (!bucket) {
      bucket = new TokenBucket(capacity, windowMs)
      this.#buckets.set(key, bucket)
    }
    return bucket
  }

  /** The refusal of a request over the limits, as the public endpoint words it; null when allowed. */
  #rateLimit(method: string): { message: string; waitMs: number } | null {
    if (!this.#limits) return null
    const overall = this.#bucket('*', this.#limits.overall, this.#limits.windowMs)
    const perMethod = this.#bucket(method, this.#limits.perMethod, this.#limits.windowMs)
    if (!overall.available()) {
      return {
        message:
          'Too many requests from your IP, contact your app developer or support@rpcpool.com.',
        waitMs: overall.waitMs(),
      }
    }
    if (!perMethod.available()) {
      return {
        message:
          'Too many requests for a specific RPC call, contact your app developer or support@rpcpool.com.',
        waitMs: perMethod.waitMs(),
      }
    }
    overall.take()
    perMethod.take()
    return null
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
      case 'getAccountInfo':
        return this.#accountInfo(params[0], params[1] ?? {})
      case 'getBalance':
        return this.#balance(params[0], params[1] ?? {})
      case 'getTokenAccountsByOwner':
        return this.#tokenAccountsByOwner(params[0], params[1], params[2] ?? {})
      case 'getSlot':
        return this.#tip(this.#commitment(params[0]))
      case 'getLatestBlockhash':
        return {
          context: { slot: this.chain.slot },
          value: {
            blockhash: String(this.chain.svm.latestBlockhash()),
            lastValidBlockHeight: this.chain.slot + 150,
          },
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

  /** The slot a method answers at; -32016 (with the node's slot) when below `minContextSlot`. */
  #contextSlot(config: ContextConfig, lag = 0): number {
    const slot = this.#tip(this.#commitment(config)) - lag
    if (config.minContextSlot !== undefined && slot < config.minContextSlot) {
      throw new RpcError(-32016, 'Minimum context slot has not been reached', { contextSlot: slot })
    }
    return slot
  }

  /** `{context: {slot}, value: lamports}`; an account that does not exist has 0. */
  #balance(address: string, config: ContextConfig) {
    const slot = this.#contextSlot(config, this.balanceLag)
    return {
      context: { apiVersion: '2.2.0', slot },
      value: Number(this.chain.lamportsAt(address, slot)),
    }
  }

  /**
   * The owner's token accounts of one mint (the node finds the mint's token
   * program itself) or of one token program, as of the commitment's tip,
   * jsonParsed. Refusals as the node words them: an unknown mint, an
   * account that is no mint, a program that is no token program.
   */
  #tokenAccountsByOwner(
    owner: string,
    filter: { mint?: string; programId?: string } | undefined,
    config: ContextConfig & { encoding?: string }
  ) {
    let program: string
    if (filter?.mint) {
      const mint = this.chain.svm.getAccount(filter.mint as any)
      if (!mint.exists) throw new RpcError(-32602, 'Invalid param: could not find mint')
      if (!TOKEN_PROGRAMS.has(mint.programAddress))
        throw new RpcError(-32602, 'Invalid param: not a Token mint')
      program = mint.programAddress
    } else if (filter?.programId) {
      if (!TOKEN_PROGRAMS.has(filter.programId))
        throw new RpcError(-32602, 'Invalid param: unrecognized Token program id')
      program = filter.programId
    } else {
      throw new RpcError(-32602, 'Invalid params: expected a mint or a programId filter')
    }
    if (config.encoding !== 'jsonParsed')
      throw new RpcError(-32602, 'this test node serves encoding jsonParsed only')
    const slot = this.#contextSlot(config, this.balanceLag)
    const value = this.chain
      .tokenAccountsAt(slot)
      .filter(
        (entry) =>
          entry.owner === owner &&
          entry.programId === program &&
          (!filter.mint || entry.mint === filter.mint)
      )
      .sort((a, b) => (a.pubkey < b.pubkey ? -1 : 1))
      .map((entry) => jsonParsedTokenAccount(entry))
    return { context: { apiVersion: '2.2.0', slot }, value }
  }

  #status(record: RecordedTransaction): Commitment {
    if (record.slot <= this.chain.finalizedSlot) return 'finalized'
    if (record.slot <= this.chain.confirmedSlot) return 'confirmed'
    return 'processed'
  }

  #visible(commitment: Commitment) {
    const tip = this.#tip(commitment)
    return this.chain.records.filter(
      (record) => record.slot <= tip && !this.forgotten.has(record.signature)
    )
  }

  /** Only the owner and lamports matter to the gateway (it asks with an empty data slice). */
  #accountInfo(
    address: string,
    config: { encoding?: string; dataSlice?: { offset: number; length: number } }
  ) {
    const account = this.chain.svm.getAccount(address as any)
    if (!account.exists) return { context: { slot: this.chain.slot }, value: null }
    const data = config.dataSlice
      ? account.data.slice(
          config.dataSlice.offset,
          config.dataSlice.offset + config.dataSlice.length
        )
      : account.data
    return {
      context: { slot: this.chain.slot },
      value: {
        data: [Buffer.from(data).toString('base64'), 'base64'],
        executable: account.executable,
        lamports: Number(account.lamports),
        owner: account.programAddress,
        rentEpoch: 18446744073709551615,
        space: account.data.length,
      },
    }
  }

  #signaturesForAddress(
    address: string,
    config: { limit?: number; before?: string; until?: string } & ContextConfig
  ) {
    const commitment = this.#commitment(config)
    if (commitment === 'processed')
      throw new RpcError(-32602, 'Method does not support commitment below `confirmed`')
    const limit = config.limit ?? 1000
    if (limit < 1 || limit > 1000) throw new RpcError(-32602, 'Invalid limit; max 1000')
    const tip = this.#contextSlot(config, this.listingLag)
    let list = this.#visible(commitment)
      .filter((record) => record.slot <= tip && !this.unlisted.has(record.signature))
      .filter((record) => record.accountKeys.some((key) => key.pubkey === address))
      .reverse()
    if (config.before) {
      const index = list.findIndex((record) => record.signature === config.before)
      if (index === -1 && this.unknownSignature === 'error') throw this.#unknown(config.before)
      list = index === -1 ? [] : list.slice(index + 1)
    }
    if (config.until) {
      const index = list.findIndex((record) => record.signature === config.until)
      if (index === -1 && this.unknownSignature === 'error') throw this.#unknown(config.until)
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

  #transaction(
    signature: string,
    config: { encoding?: string; commitment?: Commitment; maxSupportedTransactionVersion?: number }
  ) {
    const commitment = this.#commitment(config)
    if (commitment === 'processed')
      throw new RpcError(-32602, 'Method does not support commitment below `confirmed`')
    if (config.encoding !== 'jsonParsed')
      throw new RpcError(-32602, 'this test node serves encoding jsonParsed only')
    const record = this.#visible(commitment).find((entry) => entry.signature === signature)
    if (!record) return null
    const version = this.newerVersion.has(signature) ? 1 : 0
    if (
      config.maxSupportedTransactionVersion === undefined ||
      config.maxSupportedTransactionVersion < version
    ) {
      throw new RpcError(
        -32015,
        `Transaction version (${version}) is not supported by the requesting client. ` +
          `Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${version}`
      )
    }
    const answer = jsonParsedTransaction(record)
    return this.rewrite ? this.rewrite(signature, answer) : answer
  }

  #unknown(signature: string) {
    return new RpcError(-32602, `Invalid params: signature ${signature} not found`)
  }

  #signatureStatuses(signatures: string[]) {
    return {
      context: { slot: this.chain.slot },
      value: signatures.map((signature) => {
        const record = this.chain.find(signature)
        if (!record || this.forgotten.has(signature)) return null
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
