import { Address, beginCell, Cell, storeMessage, type Message, type TupleItem } from '@ton/core'
import type { BlockchainTransaction } from '@ton/sandbox'
import { HttpStub } from '#tests/helpers/http_stub'
import type { TonTestChain } from '#tests/helpers/ton/ton_test_chain'

type RpcRequest = { id?: unknown; method: string; params: Record<string, any> }

class RpcError extends Error {
  constructor(
    message: string,
    readonly code: number
  ) {
    super(message)
  }
}

function friendly(address: Address) {
  return address.toString({ urlSafe: true, bounceable: true })
}

/** toncenter's raw.message object. */
function messageJson(message: Message | undefined | null, cell?: Cell) {
  if (!message) return undefined
  const info = message.info
  const external = (address: unknown) => (Address.isAddress(address) ? friendly(address) : '')
  return {
    '@type': 'raw.message',
    'hash': (cell ?? beginCell().store(storeMessage(message)).endCell()).hash().toString('base64'),
    'source': info.type === 'internal' ? friendly(info.src) : info.type === 'external-out' ? friendly(info.src) : '',
    'destination': info.type === 'external-out' ? '' : external(info.dest),
    'value': info.type === 'internal' ? info.value.coins.toString() : '0',
    'extra_currencies': [],
    'fwd_fee': info.type === 'internal' ? info.forwardFee.toString() : '0',
    'ihr_fee': info.type === 'internal' ? info.ihrFee.toString() : '0',
    'created_lt': info.type === 'external-in' ? '0' : info.createdLt.toString(),
    'body_hash': message.body.hash().toString('base64'),
    'msg_data': { '@type': 'msg.dataRaw', 'body': message.body.toBoc().toString('base64'), 'init_state': '' },
    'message': '',
  }
}

/** toncenter's raw.transaction object: `data` is the transaction BOC TonClient parses. */
function transactionJson(transaction: BlockchainTransaction, account: Address) {
  const messages = transaction.raw.refs[0].beginParse()
  const inCell = messages.loadBit() ? messages.loadRef() : undefined
  return {
    '@type': 'raw.transaction',
    'address': { '@type': 'accountAddress', 'account_address': friendly(account) },
    'utime': transaction.now,
    'data': transaction.raw.toBoc().toString('base64'),
    'transaction_id': {
      '@type': 'internal.transactionId',
      'lt': transaction.lt.toString(),
      'hash': transaction.hash().toString('base64'),
    },
    'fee': transaction.totalFees.coins.toString(),
    'storage_fee': '0',
    'other_fee': '0',
    'in_msg': messageJson(transaction.inMessage, inCell),
    'out_msgs': [...transaction.outMessages.values()].map((message) => messageJson(message)),
  }
}

function hashBuffer(text: string) {
  return /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64')
}

function stackItemIn(entry: [string, string]): TupleItem {
  const [type, value] = entry
  if (type === 'num') return { type: 'int', value: BigInt(value) }
  if (type === 'tvm.Slice') return { type: 'slice', cell: Cell.fromBase64(value) }
  if (type === 'tvm.Cell') return { type: 'cell', cell: Cell.fromBase64(value) }
  throw new RpcError(`unsupported stack entry ${type}`, 400)
}

function stackItemOut(item: TupleItem): unknown {
  switch (item.type) {
    case 'int':
      return ['num', item.value < 0n ? `-0x${(-item.value).toString(16)}` : `0x${item.value.toString(16)}`]
    case 'cell':
    case 'slice':
    case 'builder':
      // toncenter shows cells and slices alike
      return ['cell', { bytes: item.cell.toBoc().toString('base64'), object: {} }]
    case 'null':
      return ['null']
    default:
      return ['list', { '@type': 'tvm.list', 'elements': [] }]
  }
}

/** toncenter's documented limits: requests per second without a key, and with a (free plan) key. */
export const TONCENTER_LIMITS = { withoutKey: 1, withKey: 10 }

/** What toncenter answers, with HTTP 429, to a request over its limit (docs.ton.org, "Rate limits"). */
export const RATE_LIMIT_ANSWER = { ok: false, result: 'Ratelimit exceed', code: 429 }

/**
 * A token bucket per API key (and one for keyless callers), as toncenter
 * limits: `perSecond` requests a second, bursts of at most that many.
 */
class RateLimiter {
  #buckets = new Map<string, { tokens: number; at: number }>()

  constructor(readonly limits: { withoutKey: number; withKey: number }) {}

  take(apiKey: string | undefined): boolean {
    const rate = apiKey ? this.limits.withKey : this.limits.withoutKey
    const now = performance.now()
    const bucket = this.#buckets.get(apiKey ?? '') ?? { tokens: rate, at: now }
    bucket.tokens = Math.min(rate, bucket.tokens + ((now - bucket.at) / 1000) * rate)
    bucket.at = now
    this.#buckets.set(apiKey ?? '', bucket)
    if (bucket.tokens < 1) return false
    bucket.tokens -= 1
    return true
  }
}

/**
 * A local stand-in for toncenter's v2 `jsonRPC` endpoint, backed by the
 * sandbox: answers what the real @ton/ton TonClient asks the plugin's way
 * (getTransactions, runGetMethod, tryLocateResultTx, getMasterchainInfo) in toncenter's JSON
 * shapes, limits requests like toncenter (429 "Ratelimit exceed" over 1/s
 * without a key, 10/s with one), and records the method of every call served.
 */
export class FakeToncenter extends HttpStub {
  calls: string[] = []
  /** Requests refused with 429. */
  limited = 0
  /** Times of the requests served (ms, performance clock). */
  servedAt: number[] = []
  /** When set, calls without this X-API-Key are refused like toncenter does (401). */
  requiredApiKey: string | null = null
  apiKeysSeen: (string | undefined)[] = []
  /** Answers these methods with this HTTP status (429: toncenter's limit answer; else an outage), while set. */
  failing = new Map<string, 429 | 500 | 502>()
  /** Transactions (hex hash) served with a BOC no client can parse. */
  corrupt = new Set<string>()
  #limiter = new RateLimiter(TONCENTER_LIMITS)

  constructor(private readonly chain: TonTestChain) {
    super()
    this.handler = (request, response, body) => {
      const reply = (status: number, payload: unknown) => {
        response.writeHead(status, { 'content-type': 'application/json' })
        response.end(JSON.stringify(payload))
      }
      const apiKey = request.headers['x-api-key'] as string | undefined
      this.apiKeysSeen.push(apiKey)
      if (this.requiredApiKey !== null && apiKey !== this.requiredApiKey) {
        return reply(401, { ok: false, error: 'API key does not exist', code: 401 })
      }
      if (!this.#limiter.take(apiKey)) {
        this.limited++
        return reply(429, RATE_LIMIT_ANSWER)
      }
      let call: RpcRequest
      try {
        call = JSON.parse(body)
      } catch {
        return reply(422, { ok: false, error: 'invalid JSON', code: 422 })
      }
      const failure = this.failing.get(call.method)
      if (failure === 429) return reply(429, RATE_LIMIT_ANSWER)
      if (failure) return reply(failure, { ok: false, error: 'LITE_SERVER_NETWORK: liteserver timeout', code: failure })
      this.calls.push(call.method)
      this.servedAt.push(performance.now())
      this.#answer(call)
        .then((result) => reply(200, { 'ok': true, result, '@extra': '1:fake', 'jsonrpc': '2.0', 'id': call.id }))
        .catch((error) => {
          const code = error instanceof RpcError ? error.code : 500
          reply(code, { ok: false, error: (error as Error).message, code, jsonrpc: '2.0', id: call.id })
        })
    }
  }

  get rpcUrl() {
    return `${this.url}/api/v2/jsonRPC`
  }

  reset() {
    this.calls = []
    this.limited = 0
    this.servedAt = []
    this.apiKeysSeen = []
    this.requiredApiKey = null
    this.failing.clear()
    this.corrupt.clear()
    this.#limiter = new RateLimiter(TONCENTER_LIMITS)
  }

  async #answer({ method, params }: RpcRequest): Promise<unknown> {
    if (method === 'getTransactions') return this.#getTransactions(params)
    if (method === 'runGetMethod') return this.#runGetMethod(params)
    if (method === 'tryLocateResultTx') return this.#tryLocateResultTx(params)
    if (method === 'getMasterchainInfo') return this.#masterchainInfo()
    throw new RpcError(`method ${method} is not served by the fake toncenter`, 404)
  }

  /** The masterchain's last block: the sandbox has none, so one per transaction it recorded (seqno 1 when empty). */
  #masterchainInfo() {
    const block = (seqno: number) => ({
      '@type': 'ton.blockIdExt',
      'workchain': -1,
      'shard': '-9223372036854775808',
      'seqno': seqno,
      'root_hash': Buffer.alloc(32, seqno % 256).toString('base64'),
      'file_hash': Buffer.alloc(32, 7).toString('base64'),
    })
    return {
      '@type': 'blocks.masterchainInfo',
      'last': block(this.chain.transactions.length + 1),
      'state_root_hash': Buffer.alloc(32, 1).toString('base64'),
      'init': block(0),
    }
  }

  /** Newest first from (lt, hash) inclusive, down to to_lt exclusive, `limit` at most. */
  #getTransactions(params: Record<string, any>) {
    const account = Address.parse(params.address)
    let transactions = this.chain.transactionsOf(account)
    if (params.lt !== undefined && params.hash !== undefined) {
      const lt = BigInt(params.lt)
      const hash = hashBuffer(String(params.hash))
      const start = transactions.findIndex((transaction) => transaction.lt === lt && transaction.hash().equals(hash))
      if (start === -1) {
        throw new RpcError('LITE_SERVER_UNKNOWN: cannot locate transaction in block with specified logical time', 500)
      }
      transactions = transactions.slice(start)
    }
    if (params.to_lt !== undefined && params.to_lt !== '0') {
      const toLt = BigInt(params.to_lt)
      transactions = transactions.filter((transaction) => transaction.lt > toLt)
    }
    return transactions.slice(0, Number(params.limit ?? 10)).map((transaction) => {
      const json = transactionJson(transaction, account)
      if (!this.corrupt.has(transaction.hash().toString('hex'))) return json
      // a well-formed bag of cells that is not a transaction
      return { ...json, data: beginCell().storeUint(0xdead, 16).endCell().toBoc().toString('base64') }
    })
  }

  /** The transaction of `destination` that processed the message `source` created at `created_lt`. */
  #tryLocateResultTx(params: Record<string, any>) {
    const source = Address.parse(params.source)
    const destination = Address.parse(params.destination)
    const createdLt = BigInt(params.created_lt)
    const found = this.chain.transactionsOf(destination).find((transaction) => {
      const info = transaction.inMessage?.info
      return info?.type === 'internal' && info.src.equals(source) && info.createdLt === createdLt
    })
    if (!found) throw new RpcError('LITE_SERVER_UNKNOWN: cannot locate transaction in block with specified logical time', 500)
    return transactionJson(found, destination)
  }

  async #runGetMethod(params: Record<string, any>) {
    const account = Address.parse(params.address)
    const stack = ((params.stack ?? []) as [string, string][]).map(stackItemIn)
    try {
      const result = await this.chain.blockchain.runGetMethod(account, params.method, stack)
      return {
        '@type': 'smc.runResult',
        'gas_used': Number(result.gasUsed),
        'stack': result.stack.map(stackItemOut),
        'exit_code': result.exitCode,
      }
    } catch (error) {
      const exitCode = (error as { exitCode?: number }).exitCode
      if (typeof exitCode !== 'number') throw error
      return { '@type': 'smc.runResult', 'gas_used': 0, 'stack': [], 'exit_code': exitCode }
    }
  }
}
