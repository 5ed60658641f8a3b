import { createHash } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import { utils } from 'tronweb'
import {
  hexOf,
  newTronAccount,
  signedContractCall,
  signedTrc20Transfer,
  signedTrxTransfer,
  type SignedTronTransaction,
  type TronAccount,
} from '#tests/helpers/tron/tron_transactions'

const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef'
/** keccak256("Approval(address,address,uint256)"): a log that is not a transfer. */
const APPROVAL_TOPIC = '8c5be1e5ebec7d5bd14f71427b1e84f3dd0314c0f7b2291e5b200ac8c7c3b925'
/** balanceOf(address) */
const BALANCE_OF_SELECTOR = '70a08231'

type Block = { number: number; timestamp: number; blockId: string }

/** A transaction in a block of the fake chain, with what the node derives from it. */
export type LedgerEntry = {
  txid: string
  transaction: SignedTronTransaction & { ret: { contractRet: string }[] }
  blockNumber: number
  timestamp: number
  info: Record<string, unknown>
  /** False when the transaction failed (reverted, or a TRX transfer whose contractRet is not SUCCESS): it moved nothing. */
  success: boolean
  /** The Transfer events a successful contract call emitted, in log order (each a row of the v1 trc20 index). */
  events: FakeTransferEvent[]
  /** TRX the transaction itself moves (a TransferContract). */
  value: { from: string; to: string; sun: bigint } | null
  /** What the contract call moved by itself (TRX or TRC-10), in the receipt's internal_transactions order. */
  internals: FakeInternalTransfer[]
  /** Accounts the v1 transaction index relates the transaction to as receiver. */
  receivers: string[]
  /** False while TronGrid's index has not caught up with it (overlap tests). */
  indexed: boolean
  /** Block time after the transaction's block at which the v1 index shows it (its lag). */
  indexDelayMs: number
  /** Fields the v1 index gets wrong in its rows of this transaction (a malformed row). */
  rowPatch?: Record<string, unknown>
}

/**
 * TronGrid's request limit as a token bucket: `capacity` requests at
 * once, refilled at `perSecond` (0: only `refill()` refills it). Beyond
 * it TronGrid refuses every request for `penaltyMs` (30 s in production)
 * with `status`: 403 with its "suspended for 30s" text (the documented
 * answer), or 429 (burst limits of the newer plans).
 */
export type FakeRateLimit = {
  capacity: number
  perSecond: number
  status: 403 | 429
  penaltyMs: number
  /** The next this many requests are refused whatever the bucket holds (a limit met for certain, on any machine). */
  refuseNext?: number
}

export type RecordedRequest = {
  method: string
  path: string
  query: URLSearchParams
  headers: IncomingHttpHeaders
  body: string
  /** Which URL of the fake took it: TronGrid itself, or the index-less backup node. */
  via: 'main' | 'backup'
}

/** A Transfer event of a TRC-20 contract, as its log and as the trc20 index's row say it. */
export type FakeTransferEvent = { from: string; to: string; contract: string; value: string }

/**
 * An internal transaction: value a contract sent during the call. TRX
 * when `tokenId` is null, else a TRC-10 asset (not TRX). `rejected`: it
 * did not happen (a failed call rejects all of them).
 */
export type FakeInternalTransfer = {
  hash: string
  from: string
  to: string
  sun: bigint
  tokenId: string | null
  rejected: boolean
}

/** What a test asks a contract call to do (`callContract`). */
export type FakeInternalSpec = { to: string; sun: bigint; tokenId?: string; rejected?: boolean }

/** A TRC-20 token the fake's index describes in token_info. */
type TokenInfo = { symbol: string; name: string; decimals: number }

function sha256Hex(text: string) {
  return createHash('sha256').update(text).digest('hex')
}

function word(hex: string) {
  return hex.padStart(64, '0')
}

/**
 * A local stand-in for TronGrid on 127.0.0.1, following the documented
 * response shapes: the node's /wallet and /walletsolidity endpoints and the
 * v1 account index. Its ledger holds real signed transactions (tronweb);
 * every payment goes into a new block, and a block is solidified once
 * `solidLag` blocks are built on it (`mine`). Block times follow the wall
 * clock, or jump ahead by `stepMs` per mined block.
 *
 * What the real service does to clients, on demand: a request limit
 * (`rateLimit`: token bucket, 403/429 with TronGrid's error bodies and its
 * 30 s penalty), an index that trails the chain (`indexLagMs`,
 * `indexDelayMs`: a row is listed only once the head's block time has
 * moved that far past it), pages that end early (`shortPageRows`) and a
 * backup node without the v1 index (`noIndex`).
 */
export class FakeTronGrid {
  url = ''
  requests: RecordedRequest[] = []
  /** Answer every request with HTTP 503 (an endpoint that is down). */
  down = false
  /** Blocks built on a block before it is solidified (TRON: 2/3 of 27 producers ≈ 19). */
  solidLag = 19
  ledger: LedgerEntry[] = []
  tokens = new Map<string, TokenInfo>()
  /** Block time the v1 index trails the chain by (every new transaction; per payment with `indexDelayMs`). */
  indexLagMs = 0
  /** Rows per v1 page at most, whatever `limit` asks (TronGrid ends pages early while a fingerprint leads on). */
  shortPageRows: number | null = null
  /** A plain java-tron node: /wallet and /walletsolidity only, 404 on /v1. */
  noIndex = false
  /** Requests refused by the rate limit (answered 403/429). */
  refused = 0
  /**
   * Called as a balance read (getaccount, triggerconstantcontract) comes
   * in, before it is answered: a test mines blocks here to have the solid
   * head move in the middle of a balance reading.
   */
  onBalanceRead: ((path: string) => void) | null = null
  /**
   * A load-balanced backend behind: /walletsolidity balance reads answer
   * from a solid state this many blocks older than the solid head the
   * block reads report, without saying so.
   */
  staleBalanceBlocks = 0
  /** Balances held before the fake's first block (TRX: key `address|TRX`; TRC-20: `address|contract`), base units. */
  #genesis = new Map<string, bigint>()
  #limit: (FakeRateLimit & { tokens: number; at: number; penaltyUntil: number }) | null = null
  #blocks: Block[] = []
  #server: Server | null = null
  #backup: Server | null = null
  /** URL of the backup node (`startBackup`): same chain, java-tron's /wallet and /walletsolidity only. */
  backupUrl = ''
  /** The backup node is down (connection refused would be the same to the gateway; 503 is recorded). */
  backupDown = false

  constructor() {
    this.reset()
  }

  /** Empties the chain: a fresh head far from genesis, the test tokens known. */
  reset() {
    this.requests = []
    this.down = false
    this.backupDown = false
    this.solidLag = 19
    this.ledger = []
    this.indexLagMs = 0
    this.shortPageRows = null
    this.noIndex = false
    this.refused = 0
    this.onBalanceRead = null
    this.staleBalanceBlocks = 0
    this.#genesis = new Map()
    this.#limit = null
    this.#blocks = []
    this.#appendBlock(60_000_000, Date.now())
  }

  /** Turns TronGrid's request limit on (null: off), with a full bucket. */
  rateLimit(limit: Partial<FakeRateLimit> | null) {
    if (!limit) {
      this.#limit = null
      return
    }
    const full = { capacity: 15, perSecond: 15, status: 403 as const, penaltyMs: 30_000, ...limit }
    this.#limit = { ...full, tokens: full.capacity, at: Date.now(), penaltyUntil: 0 }
  }

  registerToken(contract: string, info: TokenInfo) {
    this.tokens.set(contract, info)
  }

  get head(): Block {
    return this.#blocks[this.#blocks.length - 1]
  }

  get solidHead(): Block {
    const index = Math.max(0, this.#blocks.length - 1 - this.solidLag)
    return this.#blocks[index]
  }

  /** Builds `count` empty blocks; `stepMs` moves block time ahead of the clock. */
  mine(count = 1, stepMs = 0) {
    for (let index = 0; index < count; index++) {
      const previous = this.head
      this.#appendBlock(
        previous.number + 1,
        stepMs > 0 ? previous.timestamp + stepMs : Math.max(previous.timestamp + 1, Date.now())
      )
    }
  }

  /** Pays `amount` base units of TRC-20 `contract`; `fail`: the call reverts (no event, fees burnt). */
  payTrc20(options: {
    from: TronAccount
    to: string
    contract: string
    amount: bigint
    fail?: boolean
    indexed?: boolean
    indexDelayMs?: number
  }) {
    const transaction = signedTrc20Transfer(
      options.from,
      options.contract,
      options.to,
      options.amount,
      this.head
    )
    const events = [
      {
        from: options.from.address,
        to: options.to,
        contract: options.contract,
        value: options.amount.toString(),
      },
    ]
    return this.#contractCall(transaction, {
      contract: options.contract,
      fail: options.fail ?? false,
      logs: events.map((event) => ({ event })),
      internals: [],
      receivers: [options.to],
      indexed: options.indexed,
      indexDelayMs: options.indexDelayMs,
    })
  }

  /**
   * One contract call that moves TRC-20 `contract` to several recipients
   * (an exchange's batch payout through its `via` contract): one Transfer
   * event per transfer, in order, after an Approval log (so log indexes
   * are not transfer indexes). The same recipient and amount may come twice.
   */
  payTrc20Batch(options: {
    from: TronAccount
    contract: string
    transfers: { to: string; amount: bigint }[]
    via?: string
    fail?: boolean
    indexed?: boolean
    indexDelayMs?: number
  }) {
    const via = options.via ?? newTronAccount().address
    const transaction = signedContractCall(
      options.from,
      via,
      `6f8a4b5c${word(String(options.transfers.length))}`,
      this.head
    )
    const approval = {
      address: hexOf(options.contract).slice(2),
      topics: [APPROVAL_TOPIC, word(options.from.hex.slice(2)), word(hexOf(via).slice(2))],
      data: word('0'),
    }
    return this.#contractCall(transaction, {
      contract: via,
      fail: options.fail ?? false,
      logs: [
        { raw: approval },
        ...options.transfers.map(({ to, amount }) => ({
          event: {
            from: options.from.address,
            to,
            contract: options.contract,
            value: amount.toString(),
          },
        })),
      ],
      internals: [],
      receivers: [...new Set(options.transfers.map((transfer) => transfer.to))],
      indexed: options.indexed,
      indexDelayMs: options.indexDelayMs,
    })
  }

  /**
   * A call of `contract` (a payment splitter, a wallet contract) that
   * sends value itself: each internal transfer is TRX, or a TRC-10 asset
   * when it names a `tokenId`; `rejected` ones did not happen, and a
   * failed call (`fail`) rejects them all, as java-tron records it.
   */
  callContract(options: {
    from: TronAccount
    contract: string
    internals: FakeInternalSpec[]
    fail?: boolean
    indexed?: boolean
    indexDelayMs?: number
  }) {
    const transaction = signedContractCall(options.from, options.contract, 'a1b2c3d4', this.head)
    return this.#contractCall(transaction, {
      contract: options.contract,
      fail: options.fail ?? false,
      logs: [],
      internals: options.internals,
      receivers: [...new Set(options.internals.map((internal) => internal.to))],
      indexed: options.indexed,
      indexDelayMs: options.indexDelayMs,
    })
  }

  /** Pays `sun` TRX; `fail` records a transfer whose contractRet is not SUCCESS. */
  payTrx(options: {
    from: TronAccount
    to: string
    sun: bigint
    fail?: boolean
    indexed?: boolean
    indexDelayMs?: number
  }) {
    const transaction = signedTrxTransfer(options.from, options.to, options.sun, this.head)
    const block = this.#nextBlock()
    return this.#record({
      txid: transaction.txID,
      transaction: { ...transaction, ret: [{ contractRet: options.fail ? 'FAILED' : 'SUCCESS' }] },
      blockNumber: block.number,
      timestamp: block.timestamp,
      info: {
        id: transaction.txID,
        blockNumber: block.number,
        blockTimeStamp: block.timestamp,
        contractResult: [''],
        receipt: { net_usage: 268 },
      },
      success: !options.fail,
      events: [],
      value: { from: options.from.address, to: options.to, sun: options.sun },
      internals: [],
      receivers: [options.to],
      indexed: options.indexed ?? true,
      indexDelayMs: options.indexDelayMs ?? this.indexLagMs,
    })
  }

  /** A contract call in a new block, with its receipt as java-tron writes it. */
  #contractCall(
    transaction: SignedTronTransaction,
    options: {
      contract: string
      fail: boolean
      logs: (
        { event: FakeTransferEvent } | { raw: { address: string; topics: string[]; data: string } }
      )[]
      internals: FakeInternalSpec[]
      receivers: string[]
      indexed?: boolean
      indexDelayMs?: number
    }
  ) {
    const block = this.#nextBlock()
    const internals: FakeInternalTransfer[] = options.internals.map((internal, index) => ({
      hash: sha256Hex(`internal-${transaction.txID}-${index}`),
      from: options.contract,
      to: internal.to,
      sun: internal.sun,
      tokenId: internal.tokenId ?? null,
      // A failed call rejects every internal transaction it made.
      rejected: options.fail || Boolean(internal.rejected),
    }))
    const info: Record<string, unknown> = {
      id: transaction.txID,
      fee: 13_844_850,
      blockNumber: block.number,
      blockTimeStamp: block.timestamp,
      contractResult: [options.fail ? '' : word('1')],
      contract_address: hexOf(options.contract),
      receipt: {
        energy_fee: 13_844_850,
        energy_usage_total: 130_405,
        net_usage: 345,
        result: options.fail ? 'REVERT' : 'SUCCESS',
      },
    }
    if (options.fail) {
      info.result = 'FAILED'
      info.resMessage = Buffer.from('REVERT opcode executed').toString('hex')
    } else if (options.logs.length > 0) {
      info.log = options.logs.map((log) =>
        'raw' in log
          ? log.raw
          : {
              address: hexOf(log.event.contract).slice(2),
              topics: [
                TRANSFER_TOPIC,
                word(hexOf(log.event.from).slice(2)),
                word(hexOf(log.event.to).slice(2)),
              ],
              data: word(BigInt(log.event.value).toString(16)),
            }
      )
    }
    // java-tron's JSON leaves out default values: no callValue when 0, no rejected when false; note is hex.
    if (internals.length > 0) {
      info.internal_transactions = internals.map((internal) => ({
        hash: internal.hash,
        caller_address: hexOf(internal.from),
        transferTo_address: hexOf(internal.to),
        callValueInfo: [
          internal.sun === 0n
            ? {}
            : internal.tokenId
              ? { callValue: Number(internal.sun), tokenId: internal.tokenId }
              : { callValue: Number(internal.sun) },
        ],
        note: Buffer.from('call').toString('hex'),
        ...(internal.rejected ? { rejected: true } : {}),
      }))
    }
    return this.#record({
      txid: transaction.txID,
      transaction: { ...transaction, ret: [{ contractRet: options.fail ? 'REVERT' : 'SUCCESS' }] },
      blockNumber: block.number,
      timestamp: block.timestamp,
      info,
      success: !options.fail,
      events: options.fail
        ? []
        : options.logs.flatMap((log) => ('event' in log ? [log.event] : [])),
      value: null,
      internals,
      receivers: options.receivers,
      indexed: options.indexed ?? true,
      indexDelayMs: options.indexDelayMs ?? this.indexLagMs,
    })
  }

  /** A fork drops a transaction of a block not solidified yet (it was never final). */
  drop(txid: string) {
    const entry = this.ledger.find((candidate) => candidate.txid === txid)
    if (!entry || this.isSolid(entry)) throw new Error(`cannot drop ${txid}: unknown or solidified`)
    this.ledger = this.ledger.filter((candidate) => candidate !== entry)
  }

  /** The v1 index lists the transaction with these fields replaced (an index bug, a format change). */
  corruptListing(txid: string, patch: Record<string, unknown>) {
    const entry = this.ledger.find((candidate) => candidate.txid === txid)
    if (!entry) throw new Error(`unknown ${txid}`)
    entry.rowPatch = patch
  }

  /** TronGrid's index catches up with every transaction. */
  indexAll() {
    for (const entry of this.ledger) Object.assign(entry, { indexed: true, indexDelayMs: 0 })
  }

  /** Gives `address` a balance held since before the first block (an activated account, a float). */
  fund(address: string, contract: string | null, amount: bigint) {
    const key = `${address}|${contract ?? 'TRX'}`
    this.#genesis.set(key, (this.#genesis.get(key) ?? 0n) + amount)
  }

  /**
   * What `address` holds of `contract` (null: TRX, in sun) after block
   * `blockNumber`: its funding plus every transfer to it, minus every
   * transfer from it, of the transactions that succeeded up to there.
   * Internal TRC-10 transfers are not TRX. (Fees are not burnt here.)
   */
  balanceAt(address: string, contract: string | null, blockNumber: number): bigint {
    let balance = this.#genesis.get(`${address}|${contract ?? 'TRX'}`) ?? 0n
    const add = (from: string, to: string, amount: bigint) => {
      if (to === address) balance += amount
      if (from === address) balance -= amount
    }
    for (const entry of this.ledger) {
      if (entry.blockNumber > blockNumber || !entry.success) continue
      if (contract === null) {
        if (entry.value) add(entry.value.from, entry.value.to, entry.value.sun)
        for (const internal of entry.internals) {
          if (!internal.rejected && internal.tokenId === null)
            add(internal.from, internal.to, internal.sun)
        }
      } else {
        for (const event of entry.events)
          if (event.contract === contract) add(event.from, event.to, BigInt(event.value))
      }
    }
    return balance
  }

  /** Whether an account exists (java-tron creates it on its first incoming TRX or TRC-10, not on a TRC-20 transfer). */
  #accountExists(address: string, blockNumber: number) {
    if (this.#genesis.has(`${address}|TRX`) || this.tokens.has(address)) return true
    return this.ledger.some(
      (entry) =>
        entry.blockNumber <= blockNumber &&
        (utils.address.fromHex(
          String(entry.transaction.raw_data.contract[0].parameter.value.owner_address)
        ) === address ||
          (entry.success && entry.value?.to === address) ||
          (entry.success &&
            entry.internals.some((internal) => !internal.rejected && internal.to === address)))
    )
  }

  /** Whether the v1 index shows the entry yet: indexed, and its lag elapsed in block time. */
  isListed(entry: LedgerEntry) {
    return entry.indexed && this.head.timestamp >= entry.timestamp + entry.indexDelayMs
  }

  isSolid(entry: LedgerEntry) {
    return entry.blockNumber <= this.solidHead.number
  }

  /** Requests to one path (v1 paths by their last segment, e.g. "trc20"). */
  requestsTo(path: string) {
    return this.requests.filter(
      (request) => request.path === path || request.path.endsWith(`/${path}`)
    )
  }

  async start() {
    this.#server = await this.#listen('main')
    this.url = this.#urlOf(this.#server)
    return this
  }

  /** A second URL over the same chain: a plain java-tron node, no /v1 index, no rate limit (own backup). */
  async startBackup() {
    this.#backup = await this.#listen('backup')
    this.backupUrl = this.#urlOf(this.#backup)
    return this.backupUrl
  }

  async stop() {
    for (const server of [this.#server, this.#backup]) {
      if (!server) continue
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
    this.#server = null
    this.#backup = null
  }

  async #listen(via: 'main' | 'backup') {
    const server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', () => {
        const url = new URL(request.url ?? '/', 'http://fake')
        this.requests.push({
          method: request.method ?? '',
          path: url.pathname,
          query: url.searchParams,
          headers: request.headers,
          body,
          via,
        })
        if (via === 'main' ? this.down : this.backupDown)
          return this.#send(response, 503, { error: 'service unavailable' })
        if (via === 'main' && this.#limited()) return this.#refuse(url.pathname, response)
        try {
          this.#route(
            request.method ?? 'GET',
            url,
            body,
            response,
            via === 'backup' || this.noIndex
          )
        } catch (error) {
          this.#send(response, 500, { error: (error as Error).message })
        }
      })
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return server
  }

  #urlOf(server: Server) {
    const address = server.address()
    return `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  }

  // ------------------------------------------------------------- rate limit

  /** Takes a token; true when the request is refused (bucket empty, or inside a penalty). */
  #limited() {
    const limit = this.#limit
    if (!limit) return false
    const now = Date.now()
    if (now < limit.penaltyUntil) return true
    if (limit.refuseNext && limit.refuseNext > 0) {
      limit.refuseNext--
      return true
    }
    limit.tokens = Math.min(
      limit.capacity,
      limit.tokens + ((now - limit.at) / 1000) * limit.perSecond
    )
    limit.at = now
    if (limit.tokens >= 1) {
      limit.tokens -= 1
      return false
    }
    limit.penaltyUntil = now + limit.penaltyMs
    return true
  }

  /** TronGrid's refusal: the v1 API's JSON error, the node API's {"Error"} form. */
  #refuse(path: string, response: ServerResponse) {
    this.refused++
    const limit = this.#limit!
    const text = `The key exceeds the frequency limit(${limit.capacity}), and the query server is suspended for ${Math.round(limit.penaltyMs / 1000)}s`
    if (path.startsWith('/v1/'))
      return this.#send(response, limit.status, {
        success: false,
        error: text,
        statusCode: limit.status,
      })
    return this.#send(response, limit.status, { Error: text })
  }

  // ------------------------------------------------------------------ chain

  #appendBlock(number: number, timestamp: number) {
    const blockId =
      number.toString(16).padStart(16, '0') + sha256Hex(`block-${number}-${timestamp}`).slice(16)
    const block = { number, timestamp, blockId }
    this.#blocks.push(block)
    return block
  }

  #nextBlock() {
    const previous = this.head
    return this.#appendBlock(previous.number + 1, Math.max(previous.timestamp + 1, Date.now()))
  }

  #record(entry: LedgerEntry) {
    this.ledger.push(entry)
    return entry
  }

  #byId(value: unknown, solid: boolean) {
    const txid = String(value ?? '').toLowerCase()
    const entry = this.ledger.find((candidate) => candidate.txid === txid)
    if (!entry || (solid && !this.isSolid(entry))) return null
    return entry
  }

  #blockJson(block: Block, detail = true) {
    const header = this.#headerJson(block)
    if (!detail) return header
    const transactions = this.ledger
      .filter((entry) => entry.blockNumber === block.number)
      .map((entry) => entry.transaction)
    return transactions.length > 0 ? { ...header, transactions } : header
  }

  #headerJson(block: Block) {
    return {
      blockID: block.blockId,
      block_header: {
        raw_data: {
          number: block.number,
          txTrieRoot: sha256Hex(`trie-${block.number}`),
          witness_address: '41' + sha256Hex(`witness-${block.number % 27}`).slice(0, 40),
          parentHash:
            this.#blocks.find((entry) => entry.number === block.number - 1)?.blockId ??
            '0'.repeat(64),
          version: 31,
          timestamp: block.timestamp,
        },
        witness_signature: sha256Hex(`signature-${block.number}`).repeat(2) + '00',
      },
    }
  }

  // ----------------------------------------------------------------- routes

  #route(method: string, url: URL, body: string, response: ServerResponse, indexless: boolean) {
    const path = url.pathname.replace(/\/+$/, '')
    const params =
      method === 'POST' && body ? JSON.parse(body) : Object.fromEntries(url.searchParams)

    switch (path) {
      case '/wallet/getnowblock':
        return this.#send(response, 200, this.#blockJson(this.head))
      case '/walletsolidity/getnowblock':
        return this.#send(response, 200, this.#blockJson(this.solidHead))
      case '/wallet/getblock':
      case '/walletsolidity/getblock':
        return this.#getBlock(
          path.startsWith('/walletsolidity') ? this.solidHead : this.head,
          params,
          response
        )
      case '/wallet/gettransactioninfobyid':
      case '/walletsolidity/gettransactioninfobyid': {
        const entry = this.#byId(params.value, path.startsWith('/walletsolidity'))
        return this.#send(response, 200, entry ? entry.info : {})
      }
      case '/wallet/gettransactionbyid':
      case '/walletsolidity/gettransactionbyid': {
        const entry = this.#byId(params.value, path.startsWith('/walletsolidity'))
        return this.#send(response, 200, entry ? entry.transaction : {})
      }
      case '/wallet/getaccount':
      case '/walletsolidity/getaccount':
        this.onBalanceRead?.(path)
        return this.#getAccount(this.#balanceBlock(path), params, response)
      case '/wallet/triggerconstantcontract':
      case '/walletsolidity/triggerconstantcontract':
        this.onBalanceRead?.(path)
        return this.#constantCall(this.#balanceBlock(path), params, response)
    }

    if (indexless) {
      // java-tron's HTTP server (Jetty) knows no /v1 route.
      response.writeHead(404, { 'content-type': 'text/html;charset=iso-8859-1' })
      return response.end(`<html><body><h2>404 Not found</h2><pre>${path}</pre></body></html>`)
    }
    const account = /^\/v1\/accounts\/([^/]+)\/transactions(\/trc20)?$/.exec(path)
    if (account && method === 'GET')
      return this.#accountTransactions(account[1], Boolean(account[2]), url.searchParams, response)
    return this.#send(response, 404, { error: `no route ${method} ${path}` })
  }

  /** The block a balance read answers from: the head, or the solid head (a stale backend's, when set). */
  #balanceBlock(path: string) {
    return path.startsWith('/walletsolidity')
      ? this.solidHead.number - this.staleBalanceBlocks
      : this.head.number
  }

  /** An address parameter: base58 with `visible: true`, else 41-prefixed hex. */
  #addressParam(value: unknown, visible: boolean): string | null {
    const text = String(value ?? '')
    try {
      if (visible) return utils.address.isAddress(text) && text.startsWith('T') ? text : null
      return /^41[0-9a-fA-F]{40}$/.test(text) ? utils.address.fromHex(text) : null
    } catch {
      return null
    }
  }

  /**
   * POST /wallet(solidity)/getaccount: the account as of that view's
   * latest block, no block named; `{}` for an account that does not exist
   * (never received TRX); `balance` left out when 0 (proto3 JSON).
   */
  #getAccount(blockNumber: number, params: Record<string, unknown>, response: ServerResponse) {
    const visible = params.visible === true || params.visible === 'true'
    const address = this.#addressParam(params.address, visible)
    if (!address)
      return this.#send(response, 200, {
        Error: 'class java.lang.IllegalArgumentException : Invalid address',
      })
    if (!this.#accountExists(address, blockNumber)) return this.#send(response, 200, {})
    const balance = this.balanceAt(address, null, blockNumber)
    return this.#send(response, 200, {
      address: visible ? address : hexOf(address),
      ...(balance !== 0n ? { balance: Number(balance) } : {}),
      create_time: this.#blocks[0].timestamp,
      net_window_size: 28800000,
      account_resource: { energy_window_size: 28800000 },
      owner_permission: {
        permission_name: 'owner',
        threshold: 1,
        keys: [{ address: visible ? address : hexOf(address), weight: 1 }],
      },
    })
  }

  /**
   * POST /wallet(solidity)/triggerconstantcontract: a read-only call
   * (TransactionExtention). The fake knows balanceOf(address) of its
   * registered TRC-20 contracts; an owner account that does not exist or
   * an unknown contract is refused the way java-tron refuses it (200 with
   * a result code and a hex message, no constant_result).
   */
  #constantCall(blockNumber: number, params: Record<string, unknown>, response: ServerResponse) {
    const visible = params.visible === true || params.visible === 'true'
    const owner = this.#addressParam(params.owner_address, visible)
    const contract = this.#addressParam(params.contract_address, visible)
    const refuse = (message: string) =>
      this.#send(response, 200, {
        result: { code: 'CONTRACT_VALIDATE_ERROR', message: Buffer.from(message).toString('hex') },
        transaction: {},
      })
    if (!owner || !this.#accountExists(owner, blockNumber))
      return refuse('Validate TriggerSmartContract error, no OwnerAccount.')
    if (!contract || !this.tokens.has(contract))
      return refuse('No contract or not a valid smart contract')
    const data =
      typeof params.function_selector === 'string'
        ? params.function_selector === 'balanceOf(address)'
          ? BALANCE_OF_SELECTOR + String(params.parameter ?? '')
          : 'ffffffff'
        : String(params.data ?? '')
    if (!data.startsWith(BALANCE_OF_SELECTOR) || !/^[0-9a-f]{64}$/i.test(data.slice(8))) {
      return this.#send(response, 200, {
        result: {
          code: 'CONTRACT_EXE_ERROR',
          message: Buffer.from('REVERT opcode executed').toString('hex'),
        },
        energy_used: 260,
        constant_result: [''],
        transaction: {},
      })
    }
    const holder = utils.address.fromHex(`41${data.slice(8 + 24)}`)
    const balance = this.balanceAt(holder, contract, blockNumber)
    return this.#send(response, 200, {
      result: { result: true },
      energy_used: 935,
      constant_result: [word(balance.toString(16))],
      transaction: {
        ret: [{}],
        visible: false,
        txID: sha256Hex(`constant-${blockNumber}-${data}`),
        raw_data: {
          contract: [
            {
              parameter: {
                value: { data, owner_address: hexOf(owner), contract_address: hexOf(contract) },
                type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
              },
              type: 'TriggerSmartContract',
            },
          ],
          ref_block_bytes: (this.head.number & 0xffff).toString(16).padStart(4, '0'),
          ref_block_hash: this.head.blockId.slice(16, 32),
          expiration: this.head.timestamp + 60_000,
          timestamp: Date.now(),
        },
      },
    })
  }

  /**
   * POST /wallet(solidity)/getblock: `id_or_num` absent is the latest
   * (solidified) block; `detail: false` is its header alone.
   */
  #getBlock(latest: Block, params: Record<string, unknown>, response: ServerResponse) {
    const detail = params.detail === true || params.detail === 'true'
    const wanted = params.id_or_num
    if (wanted === undefined || wanted === '')
      return this.#send(response, 200, this.#blockJson(latest, detail))
    const text = String(wanted)
    const block = /^\d+$/.test(text)
      ? this.#blocks.find((entry) => entry.number === Number(text) && entry.number <= latest.number)
      : this.#blocks.find(
          (entry) => entry.blockId === text.toLowerCase() && entry.number <= latest.number
        )
    return this.#send(response, 200, block ? this.#blockJson(block, detail) : {})
  }

  /**
   * GET /v1/accounts/{address}/transactions[/trc20]: only_confirmed,
   * only_unconfirmed, only_to, only_from, min/max_timestamp,
   * contract_address, order_by (block_timestamp, default desc), limit
   * (≤ 200) and fingerprint paging, as TronGrid documents them.
   */
  #accountTransactions(
    addressParam: string,
    trc20: boolean,
    query: URLSearchParams,
    response: ServerResponse
  ) {
    const address = addressParam.startsWith('T')
      ? addressParam
      : utils.address.fromHex(addressParam)
    const limit = Number(query.get('limit') ?? 20)
    if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
      return this.#send(response, 400, {
        success: false,
        error: 'limit must be between 1 and 200',
        statusCode: 400,
      })
    }
    const flag = (name: string) => query.get(name) === 'true'
    const min = Number(query.get('min_timestamp') ?? 0)
    const max = Number(query.get('max_timestamp') ?? Number.MAX_SAFE_INTEGER)
    const contractParam = query.get('contract_address')
    const contract =
      contractParam && !contractParam.startsWith('T')
        ? utils.address.fromHex(contractParam)
        : contractParam
    const ascending = (query.get('order_by') ?? 'block_timestamp,desc') === 'block_timestamp,asc'

    let entries = this.ledger.filter(
      (entry) => this.isListed(entry) && entry.timestamp >= min && entry.timestamp <= max
    )
    if (flag('only_confirmed')) entries = entries.filter((entry) => this.isSolid(entry))
    if (flag('only_unconfirmed')) entries = entries.filter((entry) => !this.isSolid(entry))
    const sender = (entry: LedgerEntry) =>
      utils.address.fromHex(
        String(entry.transaction.raw_data.contract[0].parameter.value.owner_address)
      )

    const related = (to: string, from: string) => {
      if (flag('only_to') && !flag('only_from')) return to === address
      if (flag('only_from') && !flag('only_to')) return from === address
      return to === address || from === address
    }

    const rows: { timestamp: number; row: unknown }[] = []
    if (trc20) {
      // One row per Transfer event: a transaction that pays the address
      // twice is listed twice, alike but for the value (or not at all).
      // Rows name no log; only their order tells them apart.
      for (const entry of entries) {
        for (const event of entry.events) {
          if (contract && event.contract !== contract) continue
          if (!related(event.to, event.from)) continue
          const token = this.tokens.get(event.contract) ?? {
            symbol: 'UNKNOWN',
            name: 'Unknown',
            decimals: 0,
          }
          rows.push({
            timestamp: entry.timestamp,
            row: {
              transaction_id: entry.txid,
              token_info: {
                symbol: token.symbol,
                address: event.contract,
                decimals: token.decimals,
                name: token.name,
              },
              block_timestamp: entry.timestamp,
              from: event.from,
              to: event.to,
              type: 'Transfer',
              value: event.value,
              ...entry.rowPatch,
            },
          })
        }
      }
    } else {
      // The index relates a transaction to its sender and to every receiver
      // (TRX recipient, TRC-20 recipient, recipient of an internal
      // transfer): only the type tells them apart. With search_internal
      // (default true) the internal transactions come as rows of their
      // own, in another shape, mixed in with the transactions.
      const internalRows = query.get('search_internal') !== 'false'
      for (const entry of entries) {
        if (related(entry.receivers.includes(address) ? address : '', sender(entry))) {
          rows.push({
            timestamp: entry.timestamp,
            row: {
              ...entry.transaction,
              net_usage: 268,
              net_fee: 0,
              energy_usage: 0,
              energy_fee: 0,
              energy_usage_total: 0,
              blockNumber: entry.blockNumber,
              block_timestamp: entry.timestamp,
              internal_transactions: entry.internals.map((internal) =>
                this.#internalRow(entry, internal)
              ),
              ...entry.rowPatch,
            },
          })
        }
        if (!internalRows) continue
        for (const internal of entry.internals) {
          if (!related(internal.to, internal.from)) continue
          rows.push({
            timestamp: entry.timestamp,
            row: { ...this.#internalRow(entry, internal), ...entry.rowPatch },
          })
        }
      }
    }
    rows.sort((a, b) => (ascending ? a.timestamp - b.timestamp : b.timestamp - a.timestamp))

    const offset = query.get('fingerprint')
      ? Number(Buffer.from(query.get('fingerprint')!, 'base64url').toString())
      : 0
    const size = this.shortPageRows === null ? limit : Math.min(limit, this.shortPageRows)
    const page = rows.slice(offset, offset + size)
    const more = offset + size < rows.length
    const meta: Record<string, unknown> = { at: Date.now(), page_size: page.length }
    if (more) {
      const fingerprint = Buffer.from(String(offset + size)).toString('base64url')
      const next = new URLSearchParams(query)
      next.set('fingerprint', fingerprint)
      meta.fingerprint = fingerprint
      meta.links = {
        next: `${this.url}/v1/accounts/${addressParam}/transactions${trc20 ? '/trc20' : ''}?${next}`,
      }
    }
    return this.#send(response, 200, { data: page.map((entry) => entry.row), success: true, meta })
  }

  /**
   * An internal transaction as the v1 index lists it: hex addresses, the
   * parent's id, the note in plain text, and the value keyed by asset:
   * "_" for TRX, the TRC-10 id otherwise; no call_value when nothing moved.
   */
  #internalRow(entry: LedgerEntry, internal: FakeInternalTransfer) {
    return {
      internal_tx_id: internal.hash,
      tx_id: entry.txid,
      block_timestamp: entry.timestamp,
      from_address: hexOf(internal.from),
      to_address: hexOf(internal.to),
      data: {
        note: 'call',
        rejected: internal.rejected,
        ...(internal.sun !== 0n
          ? { call_value: { [internal.tokenId ?? '_']: Number(internal.sun) } }
          : {}),
      },
    }
  }

  #send(response: ServerResponse, status: number, payload: unknown) {
    response.writeHead(status, { 'content-type': 'application/json' })
    response.end(JSON.stringify(payload))
  }
}
