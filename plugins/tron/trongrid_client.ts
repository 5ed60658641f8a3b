import type { RpcPool } from '#chains/rpc_pool'

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
}

export type Page<T> = { rows: T[]; fingerprint: string | null }

/** Rows per v1 page: TronGrid's maximum. */
export const PAGE_SIZE = 200

/**
 * Plain HTTP client of the TronGrid API (the node's /wallet and
 * /walletsolidity endpoints plus the v1 account index). Every request goes
 * through the chain's RPC pool, so a failing URL is cooled down and the next
 * one answers. Any error thrown here means "this endpoint failed"; an
 * unknown transaction is an answer (null), not an error.
 */
export class TronGridClient {
  constructor(
    private readonly rpc: RpcPool,
    private readonly apiKey: string
  ) {}

  /** Head of the chain (`solid`: the latest solidified, i.e. irreversible, block). */
  async nowBlock(solid: boolean): Promise<TronBlockMark> {
    const body = await this.#post(solid ? '/walletsolidity/getnowblock' : '/wallet/getnowblock', {})
    const header = body?.block_header?.raw_data
    if (!Number.isSafeInteger(header?.number) || !Number.isSafeInteger(header?.timestamp)) {
      throw new Error('getnowblock answered without a block header')
    }
    return { number: header.number, timestamp: header.timestamp }
  }

  /** Receipt and logs of a transaction in a (solidified when `solid`) block; null when unknown there. */
  async transactionInfo(txid: string, solid: boolean): Promise<TronTransactionInfo | null> {
    const path = solid ? '/walletsolidity/gettransactioninfobyid' : '/wallet/gettransactioninfobyid'
    const body = await this.#post(path, { value: txid })
    if (!body || body.id === undefined) return null
    if (!Number.isSafeInteger(body.blockNumber) || !Number.isSafeInteger(body.blockTimeStamp)) {
      throw new Error(`${path} answered without a block for ${txid}`)
    }
    return body as TronTransactionInfo
  }

  /** The transaction itself (contract call and result); null when unknown there. */
  async transaction(txid: string, solid: boolean): Promise<TronTransaction | null> {
    const path = solid ? '/walletsolidity/gettransactionbyid' : '/wallet/gettransactionbyid'
    const body = await this.#post(path, { value: txid })
    if (!body || body.txID === undefined) return null
    if (!Array.isArray(body.raw_data?.contract)) throw new Error(`${path} answered a transaction without contract`)
    return body as TronTransaction
  }

  /**
   * Incoming TRC-20 transfers of one token to `address` since
   * `minTimestamp`, oldest first (so a bounded run can stop anywhere and
   * resume from the last time it saw). Solidified or not: only_confirmed
   * is not sent, the scanner tells them apart by the solid head (the
   * unsolidified ones are only "seen", never paid on).
   */
  async incomingTrc20(address: string, contract: string, minTimestamp: number, fingerprint: string | null) {
    return this.#page<Trc20TransferRow>(`/v1/accounts/${address}/transactions/trc20`, {
      only_to: 'true',
      limit: String(PAGE_SIZE),
      min_timestamp: String(minTimestamp),
      contract_address: contract,
      order_by: 'block_timestamp,asc',
      ...(fingerprint ? { fingerprint } : {}),
    })
  }

  /** Transactions to `address` since `minTimestamp`, oldest first (native TRX); solidified or not, as above. */
  async incomingTransactions(address: string, minTimestamp: number, fingerprint: string | null) {
    return this.#page<TronTransaction>(`/v1/accounts/${address}/transactions`, {
      only_to: 'true',
      limit: String(PAGE_SIZE),
      min_timestamp: String(minTimestamp),
      order_by: 'block_timestamp,asc',
      ...(fingerprint ? { fingerprint } : {}),
    })
  }

  async #page<T>(path: string, query: Record<string, string>): Promise<Page<T>> {
    const body = await this.#request('GET', `${path}?${new URLSearchParams(query)}`)
    if (body?.success !== true || !Array.isArray(body.data)) {
      throw new Error(`${path} failed: ${String(body?.error ?? 'unexpected answer')}`)
    }
    const fingerprint = typeof body.meta?.fingerprint === 'string' && body.meta.fingerprint ? body.meta.fingerprint : null
    return { rows: body.data as T[], fingerprint }
  }

  #post(path: string, payload: unknown) {
    return this.#request('POST', path, payload)
  }

  #request(method: 'GET' | 'POST', pathAndQuery: string, payload?: unknown): Promise<any> {
    return this.rpc.call(async (base) => {
      const headers: Record<string, string> = { accept: 'application/json' }
      if (payload !== undefined) headers['content-type'] = 'application/json'
      if (this.apiKey) headers['TRON-PRO-API-KEY'] = this.apiKey
      const response = await fetch(`${base.replace(/\/+$/, '')}${pathAndQuery}`, {
        method,
        headers,
        body: payload === undefined ? undefined : JSON.stringify(payload),
        signal: AbortSignal.timeout(this.rpc.timeoutMs),
      })
      const text = await response.text()
      // 429 (rate limit), 401/403 (API key) and 5xx alike: this endpoint
      // cannot answer now, the pool moves on to the next one.
      if (!response.ok) throw new Error(`HTTP ${response.status} from ${pathAndQuery.split('?')[0]}: ${text.slice(0, 200)}`)
      let body: any
      try {
        body = JSON.parse(text)
      } catch {
        throw new Error(`non-JSON answer from ${pathAndQuery.split('?')[0]}`)
      }
      // java-tron reports bad requests as 200 {"Error": "..."}.
      if (body && typeof body === 'object' && typeof body.Error === 'string') {
        throw new Error(`${pathAndQuery.split('?')[0]}: ${body.Error}`)
      }
      return body
    })
  }
}
