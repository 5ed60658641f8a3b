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
    'source':
      info.type === 'internal'
        ? friendly(info.src)
        : info.type === 'external-out'
          ? friendly(info.src)
          : '',
    'destination': info.type === 'external-out' ? '' : external(info.dest),
    'value': info.type === 'internal' ? info.value.coins.toString() : '0',
    'extra_currencies': [],
    'fwd_fee': info.type === 'internal' ? info.forwardFee.toString() : '0',
    'ihr_fee': info.type === 'internal' ? info.ihrFee.toString() : '0',
    'created_lt': info.type === 'external-in' ? '0' : info.createdLt.toString(),
    'body_hash': message.body.hash().toString('base64'),
    'msg_data': {
      '@type': 'msg.dataRaw',
      'body': message.body.toBoc().toString('base64'),
      'init_state': '',
    },
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
      return [
        'num',
        item.value < 0n ? `-0x${(-item.value).toString(16)}` : `0x${item.value.toString(16)}`,
      ]
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

/** tonlib's transaction id of "no transaction": lt 0, a zero hash. */
const NO_TRANSACTION = {
  '@type': 'internal.transactionId',
  'lt': '0',
  'hash': Buffer.alloc(32).toString('base64'),
}

/** tonlib's exit code for a get method run on an account without code. */
const EXIT_CODE_NOT_INITIALIZED = -13

function transactionId(lt: bigint, hash: bigint) {
  if (lt === 0n) return NO_TRANSACTION
  return {
    '@type': 'internal.transactionId',
    'lt': lt.toString(),
    'hash': Buffer.from(hash.toString(16).padStart(64, '0'), 'hex').toString('base64'),
  }
}

/**
 * A local stand-in for toncenter's v2 `jsonRPC` endpoint, backed by the
 * sandbox: answers what the real @ton/ton TonClient asks the plugin's way
 * (getTransactions, getAddressInformation, runGetMethod, tryLocateResultTx,
 * getMasterchainInfo) in toncenter's JSON shapes, limits requests like
 * toncenter (429 "Ratelimit exceed" over 1/s without a key, 10/s with
 * one), and records the method of every call served. Like a real
 * endpoint's backends, it can leave transactions out of its listings
 * (`hidden`) and serve an account's state as it was (`holdState`), both
 * without an error.
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
  /**
   * Transactions (hex hash) getTransactions leaves out of every answer, as
   * a backend missing them would (a listing behind the state, or one that
   * never shows them); the account's state still holds them.
   */
  hidden = new Set<string>()
  /**
   * runGetMethod answers without the `block_id` and `last_transaction_id`
   * of the state it ran on, as toncenter's API did before it added them.
   */
  bareRunResults = false
  /** Accounts (raw) whose state is served as it was when held: a backend behind the others. */
  #held = new Map<string, { information: unknown; walletData?: unknown }>()
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
      if (failure)
        return reply(failure, {
          ok: false,
          error: 'LITE_SERVER_NETWORK: liteserver timeout',
          code: failure,
        })
      this.calls.push(call.method)
      this.servedAt.push(performance.now())
      this.#answer(call)
        .then((result) =>
          reply(200, { 'ok': true, result, '@extra': '1:fake', 'jsonrpc': '2.0', 'id': call.id })
        )
        .catch((error) => {
          const code = error instanceof RpcError ? error.code : 500
          reply(code, {
            ok: false,
            error: (error as Error).message,
            code,
            jsonrpc: '2.0',
            id: call.id,
          })
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
    this.hidden.clear()
    this.bareRunResults = false
    this.#held.clear()
    this.#limiter = new RateLimiter(TONCENTER_LIMITS)
  }

  /**
   * From now on, getAddressInformation and get_wallet_data of `account`
   * answer with its state of this moment, whatever happens to it, until
   * released: what a load-balanced backend that lags behind serves.
   */
  async holdState(account: Address) {
    const information = await this.#addressInformation({ address: account.toString() })
    let walletData: unknown
    if (information.state === 'active') {
      walletData = await this.#runGetMethod({
        address: account.toString(),
        method: 'get_wallet_data',
      })
    }
    this.#held.set(account.toRawString(), { information, walletData })
  }

  releaseState(account: Address) {
    this.#held.delete(account.toRawString())
  }

  async #answer({ method, params }: RpcRequest): Promise<unknown> {
    if (method === 'getTransactions') return this.#getTransactions(params)
    if (method === 'getAddressInformation') {
      return (
        this.#held.get(Address.parse(params.address).toRawString())?.information ??
        this.#addressInformation(params)
      )
    }
    if (method === 'runGetMethod') {
      const held = this.#held.get(Address.parse(params.address).toRawString())
      if (held?.walletData && params.method === 'get_wallet_data') return held.walletData
      return this.#runGetMethod(params)
    }
    if (method === 'tryLocateResultTx') return this.#tryLocateResultTx(params)
    if (method === 'getMasterchainInfo') return this.#masterchainInfo()
    throw new RpcError(`method ${method} is not served by the fake toncenter`, 404)
  }

  /** The masterchain's last block: the sandbox has none, so one per transaction it recorded (seqno 1 when empty). */
  #masterchainInfo() {
    return {
      '@type': 'blocks.masterchainInfo',
      'last': this.#block(this.chain.transactions.length + 1),
      'state_root_hash': Buffer.alloc(32, 1).toString('base64'),
      'init': this.#block(0),
    }
  }

  #block(seqno: number) {
    return {
      '@type': 'ton.blockIdExt',
      'workchain': -1,
      'shard': '-9223372036854775808',
      'seqno': seqno,
      'root_hash': Buffer.alloc(32, seqno % 256).toString('base64'),
      'file_hash': Buffer.alloc(32, 7).toString('base64'),
    }
  }

  /**
   * toncenter's raw.fullAccountState: the balance after the account's last
   * transaction, with that transaction's id. An account that never existed
   * answers like toncenter's Python API does: `balance: 0`, a number (tonlib
   * says -1 and the API clamps it), state uninitialized, lt 0.
   */
  async #addressInformation(params: Record<string, any>) {
    const contract = await this.chain.blockchain.getContract(Address.parse(params.address))
    const state = contract.accountState
    const exists = contract.lastTransactionLt !== 0n || contract.balance !== 0n
    const active = state?.type === 'active' ? state.state : null
    return {
      '@type': 'raw.fullAccountState',
      'balance': exists ? contract.balance.toString() : 0,
      'extra_currencies': [],
      'code': active?.code ? active.code.toBoc().toString('base64') : '',
      'data': active?.data ? active.data.toBoc().toString('base64') : '',
      'last_transaction_id': transactionId(
        contract.lastTransactionLt,
        contract.lastTransactionHash
      ),
      'block_id': this.#block(this.chain.transactions.length + 1),
      'frozen_hash':
        state?.type === 'frozen'
          ? Buffer.from(state.stateHash.toString(16).padStart(64, '0'), 'hex').toString('base64')
          : '',
      'sync_utime': Math.floor(Date.now() / 1000),
      'state': active ? 'active' : state?.type === 'frozen' ? 'frozen' : 'uninitialized',
    }
  }

  /** Newest first from (lt, hash) inclusive, down to to_lt exclusive, `limit` at most. */
  #getTransactions(params: Record<string, any>) {
    const account = Address.parse(params.address)
    let transactions = this.chain.transactionsOf(account)
    if (params.lt !== undefined && params.hash !== undefined) {
      const lt = BigInt(params.lt)
      const hash = hashBuffer(String(params.hash))
      const start = transactions.findIndex(
        (transaction) => transaction.lt === lt && transaction.hash().equals(hash)
      )
      if (start === -1) {
        throw new RpcError(
          'LITE_SERVER_UNKNOWN: cannot locate transaction in block with specified logical time',
          500
        )
      }
      transactions = transactions.slice(start)
    }
    if (params.to_lt !== undefined && params.to_lt !== '0') {
      const toLt = BigInt(params.to_lt)
      transactions = transactions.filter((transaction) => transaction.lt > toLt)
    }
    transactions = transactions.filter(
      (transaction) => !this.hidden.has(transaction.hash().toString('hex'))
    )
    return transactions.slice(0, Number(params.limit ?? 10)).map((transaction) => {
      const json = transactionJson(transaction, account)
      if (!this.corrupt.has(transaction.hash().toString('hex'))) return json
      // a well-formed bag of cells that is not a transaction
      return {
        ...json,
        data: beginCell().storeUint(0xdead, 16).endCell().toBoc().toString('base64'),
      }
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
    if (!found)
      throw new RpcError(
        'LITE_SERVER_UNKNOWN: cannot locate transaction in block with specified logical time',
        500
      )
    return transactionJson(found, destination)
  }

  /**
   * toncenter's smc.runResult, with the `block_id` and `last_transaction_id`
   * of the state the method ran on. An account without code answers exit
   * code -13 (tonlib's), not an error.
   */
  async #runGetMethod(params: Record<string, any>) {
    const account = Address.parse(params.address)
    const stack = ((params.stack ?? []) as [string, string][]).map(stackItemIn)
    const contract = await this.chain.blockchain.getContract(account)
    const ids = this.bareRunResults
      ? {}
      : {
          block_id: this.#block(this.chain.transactions.length + 1),
          last_transaction_id: transactionId(
            contract.lastTransactionLt,
            contract.lastTransactionHash
          ),
        }
    if (contract.accountState?.type !== 'active') {
      return {
        '@type': 'smc.runResult',
        'gas_used': 0,
        'stack': [],
        'exit_code': EXIT_CODE_NOT_INITIALIZED,
        ...ids,
      }
    }
    try {
      const result = await this.chain.blockchain.runGetMethod(account, params.method, stack)
      return {
        '@type': 'smc.runResult',
        'gas_used': Number(result.gasUsed),
        'stack': result.stack.map(stackItemOut),
        'exit_code': result.exitCode,
        ...ids,
      }
    } catch (error) {
      const exitCode = (error as { exitCode?: number }).exitCode
      if (typeof exitCode !== 'number') throw error
      return { '@type': 'smc.runResult', 'gas_used': 0, 'stack': [], 'exit_code': exitCode, ...ids }
    }
  }
}
