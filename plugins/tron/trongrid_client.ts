import { RpcHttpError, parseRetryAfter, type RpcPool } from '#chains/rpc_pool'
import { hasIndex, markIndexless, notPenalised, notePenalty } from '#plugins/tron/tron_endpoints'
import { tronAddressToHex } from '#plugins/tron/tron_addresses'

/** A block as far as the gateway cares: its height and time (ms). */
export type TronBlockMark = { number: number; timestamp: number }

/** One row of GET /v1/accounts/{address}/transactions/trc20. */
export type Trc20TransferRow = {
  transaction_id: string
  token_info?: { symbol?: string; address?: string; decimals?: number; name?: string }
  block_timestamp: number
  from: string
  to: string
  type: string
  value: string
}

/** One contract call of a transaction (TRON transactions carry exactly one). */
export type TronContractCall = {
  type: string
  parameter: { value: Record<string, unknown>; type_url?: string }
}

/**
 * A transaction as the node's gettransactionbyid and TronGrid's
 * /v1/accounts/{address}/transactions return it (the latter adds
 * blockNumber and block_timestamp).
 */
export type TronTransaction = {
  txID: string
  ret?: { contractRet?: string }[]
  raw_data: { contract: TronContractCall[]; timestamp?: number }
  blockNumber?: number
  block_timestamp?: number
}

export type TronLog = { address: string; topics?: string[]; data?: string }

/**
 * One internal transaction of a receipt (value a contract sent during
 * the call; java-tron's InternalTransaction): 41-hex addresses, `note`
 * in hex ("call", "create", "suicide"), `callValueInfo` a list of
 * amounts, each TRX (no tokenId) or a TRC-10 asset (tokenId). Default
 * values are left out of the JSON: no callValue when 0, no `rejected`
 * when false. A rejected one did not happen.
 */
export type TronInternalTransaction = {
  hash?: string
  caller_address?: string
  transferTo_address?: string
  callValueInfo?: { callValue?: number | string; tokenId?: string }[]
  note?: string
  rejected?: boolean
}

/**
 * An internal transaction as TronGrid's /v1/accounts/{address}/transactions
 * lists it (search_internal, on by default): mixed in with the
 * transactions, in a shape of its own. `call_value` is keyed by asset:
 * "_" for TRX, a TRC-10 id otherwise; absent when nothing moved.
 */
export type TronInternalRow = {
  internal_tx_id?: string
  tx_id: string
  block_timestamp?: number
  from_address?: string
  to_address?: string
  data?: {
    note?: string
    rejected?: boolean
    call_value?: Record<string, number | string> | number | string
  }
}

/** POST /wallet(solidity)/gettransactioninfobyid; `{}` (null here) when unknown. */
export type TronTransactionInfo = {
  id: string
  blockNumber: number
  blockTimeStamp: number
  /** "FAILED" on failure; absent on success. */
  result?: string
  resMessage?: string
  contract_address?: string
  /** Smart-contract calls: "SUCCESS", "REVERT", "OUT_OF_ENERGY" …; absent for plain transfers. */
  receipt?: { result?: string }
  log?: TronLog[]
  internal_transactions?: TronInternalTransaction[]
}

export type Page<T> = { rows: T[]; fingerprint: string | null }

/** An endpoint answered something this client cannot read (not an outage of the HTTP kind). */
export class TronAnswerError extends Error {}

/** Rows per v1 page: TronGrid's maximum. */
export const PAGE_SIZE = 200

/**
 * Plain HTTP client of the TronGrid API (the node's /wallet and
 * /walletsolidity endpoints plus the v1 account index). Every request goes
 * through the chain's RPC pool (paced by `permit`, one per HTTP request),
 * so a failing URL is cooled down and the next one answers; v1 listings
 * only go to endpoints that serve the index (tron_endpoints.ts). Any error
 * thrown here means "this endpoint failed"; an unknown transaction is an
 * answer (null), not an error.
 */
export class TronGridClient {
  constructor(
    private readonly rpc: RpcPool,
    private readonly apiKey: string
  ) {}

  /**
   * Head of the chain (`solid`: the latest solidified, i.e. irreversible,
   * block). `getblock` with `detail: false` answers the header alone, where
   * `getnowblock` carries every transaction of the block (hundreds of kB on
   * mainnet); a node too old for `getblock` (404) is asked `getnowblock`.
   */
  async nowBlock(solid: boolean): Promise<TronBlockMark> {
    const prefix = solid ? '/walletsolidity' : '/wallet'
    const body = await this.#request(
      'POST',
      `${prefix}/getblock`,
      { detail: false },
      {
        fallback: { status: 404, pathAndQuery: `${prefix}/getnowblock`, payload: {} },
      }
    )
    const header = body?.block_header?.raw_data
    if (!Number.isSafeInteger(header?.number) || !Number.isSafeInteger(header?.timestamp)) {
      throw new TronAnswerError(`${prefix}/getblock answered without a block header`)
    }
    return { number: header.number, timestamp: header.timestamp }
  }

  /** Receipt and logs of a transaction in a (solidified when `solid`) block; null when unknown there. */
  async transactionInfo(txid: string, solid: boolean): Promise<TronTransactionInfo | null> {
    const path = solid ? '/walletsolidity/gettransactioninfobyid' : '/wallet/gettransactioninfobyid'
    const body = await this.#post(path, { value: txid })
    if (!body || body.id === undefined) return null
    if (!Number.isSafeInteger(body.blockNumber) || !Number.isSafeInteger(body.blockTimeStamp)) {
      throw new TronAnswerError(`${path} answered without a block for ${txid}`)
    }
    return body as TronTransactionInfo
  }

  /** The transaction itself (contract call and result); null when unknown there. */
  async transaction(txid: string, solid: boolean): Promise<TronTransaction | null> {
    const path = solid ? '/walletsolidity/gettransactionbyid' : '/wallet/gettransactionbyid'
    const body = await this.#post(path, { value: txid })
    if (!body || body.txID === undefined) return null
    if (!Array.isArray(body.raw_data?.contract))
      throw new TronAnswerError(`${path} answered a transaction without contract`)
    return body as TronTransaction
  }

  /**
   * Incoming TRC-20 transfers of one token to `address` since
   * `minTimestamp`, oldest first (so a bounded run can stop anywhere and
   * resume from the last time it saw). Solidified or not: only_confirmed
   * is not sent, the scanner tells them apart by the solid head (the
   * unsolidified ones are only "seen", never paid on).
   */
  async incomingTrc20(
    address: string,
    contract: string,
    window: ListingWindow,
    fingerprint: string | null
  ) {
    return this.#page<Trc20TransferRow>(`/v1/accounts/${address}/transactions/trc20`, {
      only_to: 'true',
      limit: String(PAGE_SIZE),
      ...windowQuery(window),
      contract_address: contract,
      order_by: 'block_timestamp,asc',
      ...(fingerprint ? { fingerprint } : {}),
    })
  }

  /**
   * Transactions to `address` since `minTimestamp`, oldest first (native
   * TRX), with the internal transactions that paid it (TRX a contract
   * sent) as rows of their own; solidified or not, as above.
   */
  async incomingTransactions(address: string, window: ListingWindow, fingerprint: string | null) {
    return this.#page<TronTransaction | TronInternalRow>(`/v1/accounts/${address}/transactions`, {
      only_to: 'true',
      search_internal: 'true',
      limit: String(PAGE_SIZE),
      ...windowQuery(window),
      order_by: 'block_timestamp,asc',
      ...(fingerprint ? { fingerprint } : {}),
    })
  }

  /**
   * TRX held by `address` (sun) at the latest solidified block (`solid`)
   * or the head; the answer names no block. An account that does not
   * exist answers `{}` and one with nothing leaves `balance` out: both 0.
   */
  async trxBalance(address: string, solid: boolean): Promise<bigint> {
    const path = solid ? '/walletsolidity/getaccount' : '/wallet/getaccount'
    const body = await this.#post(path, { address: tronAddressToHex(address) })
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new TronAnswerError(`${path} answered no account`)
    if (body.balance === undefined) return 0n
    if (!Number.isSafeInteger(body.balance) || body.balance < 0)
      throw new TronAnswerError(`${path} answered a balance of ${body.balance}`)
    return BigInt(body.balance)
  }

  /**
   * balanceOf(`address`) of TRC-20 `contract` (base units) at the latest
   * solidified block (`solid`) or the head, by a read-only call; the
   * answer names no block. The call is made as the contract itself: a
   * constant call needs an owner account that exists, which a receiving
   * address that only ever got TRC-20 tokens is not.
   */
  async trc20Balance(address: string, contract: string, solid: boolean): Promise<bigint> {
    const path = solid
      ? '/walletsolidity/triggerconstantcontract'
      : '/wallet/triggerconstantcontract'
    const contractHex = tronAddressToHex(contract)
    const body = await this.#post(path, {
      owner_address: contractHex,
      contract_address: contractHex,
      function_selector: 'balanceOf(address)',
      parameter: tronAddressToHex(address).slice(2).padStart(64, '0'),
    })
    const word = body?.constant_result?.[0]
    if (
      body?.result?.result !== true ||
      typeof word !== 'string' ||
      !/^[0-9a-fA-F]{64}$/.test(word)
    ) {
      const code = body?.result?.code ?? 'no result'
      const message = typeof body?.result?.message === 'string' ? hexText(body.result.message) : ''
      throw new TronAnswerError(
        `${path} balanceOf on ${contract} failed: ${code}${message ? ` (${message})` : ''}`
      )
    }
    return BigInt(`0x${word}`)
  }

  /** A v1 listing: only endpoints that serve the v1 index are asked. */
  async #page<T>(path: string, query: Record<string, string>): Promise<Page<T>> {
    const body = await this.#request('GET', `${path}?${new URLSearchParams(query)}`, undefined, {
      index: true,
    })
    if (body?.success !== true || !Array.isArray(body.data)) {
      throw new TronAnswerError(`${path} failed: ${String(body?.error ?? 'unexpected answer')}`)
    }
    const fingerprint =
      typeof body.meta?.fingerprint === 'string' && body.meta.fingerprint
        ? body.meta.fingerprint
        : null
    return { rows: body.data as T[], fingerprint }
  }

  #post(path: string, payload: unknown) {
    return this.#request('POST', path, payload)
  }

  async #request(
    method: 'GET' | 'POST',
    pathAndQuery: string,
    payload?: unknown,
    options: RequestOptions = {}
  ): Promise<any> {
    // Each round rules out one more endpoint found without the index; the
    // last round finds none eligible and the pool says so.
    for (let round = 0; ; round++) {
      const body = await this.rpc.call(
        async (base) => {
          try {
            return await this.#send(base, method, pathAndQuery, payload)
          } catch (error) {
            const fallback = options.fallback
            if (fallback && error instanceof RpcHttpError && error.status === fallback.status) {
              return this.#send(base, method, fallback.pathAndQuery, fallback.payload)
            }
            // A node without the v1 index (a plain java-tron /wallet node)
            // answers 404 there, where TronGrid answers 200 with an empty
            // list for any valid address. Remembered, and answered as a
            // success of the endpoint: it is healthy for /wallet reads and
            // must not be cooled down for lacking what it never had.
            if (options.index && error instanceof RpcHttpError && error.status === 404) {
              markIndexless(base)
              return NO_INDEX
            }
            throw error
          }
        },
        { eligible: options.index ? (url) => hasIndex(url) && notPenalised(url) : notPenalised }
      )
      if (body !== NO_INDEX || round > this.rpc.urls.length) return body
    }
  }

  async #send(
    base: string,
    method: 'GET' | 'POST',
    pathAndQuery: string,
    payload: unknown
  ): Promise<any> {
    await this.rpc.permit(base)
    const headers: Record<string, string> = { accept: 'application/json' }
    if (payload !== undefined) headers['content-type'] = 'application/json'
    if (this.apiKey) headers['TRON-PRO-API-KEY'] = this.apiKey
    const path = pathAndQuery.split('?')[0]
    const response = await fetch(`${base.replace(/\/+$/, '')}${pathAndQuery}`, {
      method,
      headers,
      body: payload === undefined ? undefined : JSON.stringify(payload),
      signal: AbortSignal.timeout(this.rpc.timeoutMs),
    })
    const text = await response.text()
    // 429 and 403 (TronGrid's rate limits and their 30 s penalty), 401
    // (API key) and 5xx: the pool decides between waiting and failing over.
    // A penalty's length is in its text: the URL is left alone until it ends.
    if (!response.ok) {
      if (response.status === 403) notePenalty(base, text)
      throw new RpcHttpError(
        `HTTP ${response.status} from ${path}: ${text.slice(0, 200)}`,
        response.status,
        parseRetryAfter(response.headers.get('retry-after'))
      )
    }
    let body: any
    try {
      body = JSON.parse(text)
    } catch {
      throw new TronAnswerError(`non-JSON answer from ${path}`)
    }
    // java-tron reports bad requests as 200 {"Error": "..."}.
    if (body && typeof body === 'object' && typeof body.Error === 'string') {
      throw new TronAnswerError(`${path}: ${body.Error}`)
    }
    return body
  }
}

/** java-tron's hex-encoded messages as text (printable part only). */
function hexText(value: string): string {
  if (!/^([0-9a-fA-F]{2})+$/.test(value)) return value.slice(0, 200)
  return Buffer.from(value, 'hex')
    .toString('utf8')
    .replace(/[^\x20-\x7e]/g, '')
    .slice(0, 200)
}

/** Marker of an endpoint that answered a v1 call with 404 (no index there). */
const NO_INDEX = Symbol('no v1 index')

/** What a v1 listing covers: block times from `since`, up to `until` when set (both inclusive). */
export type ListingWindow = { since: number; until?: number }

function windowQuery(window: ListingWindow): Record<string, string> {
  return {
    min_timestamp: String(window.since),
    ...(window.until !== undefined ? { max_timestamp: String(window.until) } : {}),
  }
}

type RequestOptions = {
  /** A v1 index call: endpoints known to lack the index are not asked. */
  index?: boolean
  /** Asked instead, on the same endpoint, when the first path answers this status. */
  fallback?: { status: number; pathAndQuery: string; payload: unknown }
}
