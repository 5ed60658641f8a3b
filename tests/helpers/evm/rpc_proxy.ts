import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

type JsonRpcCall = { jsonrpc?: string; id?: unknown; method: string; params?: any[] }
type JsonRpcAnswer = {
  jsonrpc: '2.0'
  id: unknown
  result?: unknown
  error?: { code: number; message: string }
}

/**
 * How a provider refuses an eth_getLogs range wider than it takes, with
 * the real statuses and bodies (the block numbers scaled to the limit):
 * - `geth`: HTTP 200, -32005 "query exceeds max block range" (the old fake);
 * - `alchemy`: HTTP 400, -32600 "You can make eth_getLogs requests with up
 *   to a 500 block range. Based on your parameters, this block range should
 *   work: [0x.., 0x..]";
 * - `quicknode`: HTTP 413, -32614 "eth_getLogs is limited to a 10,000 range";
 * - `bsc`: HTTP 200, -32000 "exceed maximum block range: 5000".
 */
export type RangeStyle = 'geth' | 'alchemy' | 'quicknode' | 'bsc'

/** How a provider says "too many requests": HTTP 429 with Retry-After, or inside HTTP 200 (-32005 "limit exceeded", no Retry-After). */
export type LimitStyle = '429' | '200'

const hex = (value: bigint) => `0x${value.toString(16)}`

/**
 * A JSON-RPC proxy in front of a node that behaves like the endpoints
 * operators really use, worst habits included. It counts the calls by
 * method (a batch counts each of its calls) and, on demand:
 * - refuses eth_getLogs over too wide a range (`maxLogRange`, in the
 *   `rangeStyle` of a real provider) or returning too many logs
 *   (`maxResults`: Infura's and geth's -32005 "query returned more than
 *   10000 results. Try with this block range [..]");
 * - limits like a provider: a token bucket over calls (a batch takes one
 *   token per call), answering HTTP 429 with Retry-After or, `limitStyle`
 *   '200', -32005 "limit exceeded" inside HTTP 200;
 * - answers scripted HTTP statuses first (`script`: a 429, a 503, Infura's
 *   402 "daily request count exceeded");
 * - lags (`lag` blocks behind the node): eth_blockNumber answers the node's
 *   head − lag; blocks above that are `null`; eth_getLogs over a range
 *   reaching above it silently leaves their logs out (go-ethereum#24078:
 *   no error); by block hash a block above it is "unknown block"; receipts
 *   of transactions above it are `null`; state at such a block is "header
 *   not found"; traces of it are not found.
 */
export class RpcProxy {
  url = ''
  calls = new Map<string, number>()
  maxLogRange: bigint | null = null
  rangeStyle: RangeStyle = 'geth'
  /** eth_getLogs answers with more logs than this are refused (result cap); null: no cap. */
  maxResults: number | null = null
  /** HTTP statuses answered, in order (200 for forwarded requests). */
  statuses: number[] = []
  script: { status: number; retryAfter?: string; body?: unknown }[] = []
  /** fromBlock of every eth_getLogs answered. */
  logsFrom: bigint[] = []
  /** eth_getLogs from this block on are answered 503 (an endpoint that went down midway); null: never. */
  failLogsFrom: bigint | null = null
  /** Blocks this node is behind the one it fronts (0: in step). */
  lag = 0n
  limitStyle: LimitStyle = '429'
  /** The next this many requests are refused as rate limited (in `limitStyle`), whatever the bucket holds. */
  limitNext = 0
  /** Methods this node does not offer (answered -32601 "the method ... does not exist/is not available"). */
  unsupported = new Set<string>()
  #bucket: { perSecond: number; burst: number; tokens: number; at: number } | null = null
  #server: Server | null = null

  constructor(private readonly target: string) {}

  total() {
    return [...this.calls.values()].reduce((sum, count) => sum + count, 0)
  }

  /** Forgets the counts and every behaviour but `maxLogRange` (set before or after, as a test needs). */
  reset() {
    this.calls.clear()
    this.statuses = []
    this.script = []
    this.failLogsFrom = null
    this.logsFrom = []
    this.#bucket = null
    this.lag = 0n
    this.maxResults = null
    this.rangeStyle = 'geth'
    this.limitStyle = '429'
    this.limitNext = 0
    this.unsupported = new Set()
  }

  /** Limits to `perSecond` calls, `burst` at once (null: no limit). */
  limit(perSecond: number | null, burst = perSecond ?? 0) {
    this.#bucket = perSecond === null ? null : { perSecond, burst, tokens: burst, at: Date.now() }
  }

  get limited() {
    return this.statuses.filter((status) => status === 429).length
  }

  /** Takes a token per call; the seconds to wait when the bucket is short. */
  #take(calls: number): number | null {
    const bucket = this.#bucket
    if (!bucket) return null
    const now = Date.now()
    bucket.tokens = Math.min(
      bucket.burst,
      bucket.tokens + ((now - bucket.at) / 1000) * bucket.perSecond
    )
    bucket.at = now
    if (bucket.tokens >= calls) {
      bucket.tokens -= calls
      return null
    }
    return Math.max(1, Math.ceil((calls - bucket.tokens) / bucket.perSecond))
  }

  #answer(
    outgoing: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {}
  ) {
    this.statuses.push(status)
    outgoing.writeHead(status, { 'content-type': 'application/json', ...headers })
    outgoing.end(JSON.stringify(body))
  }

  #refuse(outgoing: ServerResponse, status: number, retryAfter?: string, body?: unknown) {
    const headers: Record<string, string> = {}
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter
    const message =
      status === 429
        ? 'Too Many Requests'
        : status === 402
          ? 'daily request count exceeded, request rate limited'
          : 'Service Unavailable'
    this.#answer(
      outgoing,
      status,
      body ?? { jsonrpc: '2.0', id: null, error: { code: -32005, message } },
      headers
    )
  }

  /** Sends calls to the node as one batch; answers in the same order. */
  async #forward(calls: JsonRpcCall[]): Promise<JsonRpcAnswer[]> {
    if (calls.length === 0) return []
    const response = await fetch(this.target, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(
        calls.map((call, index) => ({
          jsonrpc: '2.0',
          id: index,
          method: call.method,
          params: call.params ?? [],
        }))
      ),
    })
    const answers = (await response.json()) as JsonRpcAnswer[]
    const byId = new Map(answers.map((answer) => [Number(answer.id), answer]))
    return calls.map((call, index) => ({ ...byId.get(index)!, id: call.id }))
  }

  /** This node's head: the node's, `lag` blocks back. */
  async #head(): Promise<bigint> {
    const [answer] = await this.#forward([{ method: 'eth_blockNumber', params: [] }])
    const head = BigInt(answer.result as string) - this.lag
    return head < 0n ? 0n : head
  }

  /** The height of a block named by hash, or null when the node does not know it. */
  async #heightOf(hash: string): Promise<bigint | null> {
    const [answer] = await this.#forward([{ method: 'eth_getBlockByHash', params: [hash, false] }])
    const block = answer.result as { number?: string } | null
    return block?.number ? BigInt(block.number) : null
  }

  /** The block a state call names: a number, a tag, or {blockHash}/{blockNumber} (EIP-1898). */
  async #stateHeight(tag: unknown, head: bigint): Promise<bigint | null> {
    if (
      tag === undefined ||
      tag === 'latest' ||
      tag === 'pending' ||
      tag === 'safe' ||
      tag === 'finalized'
    )
      return head
    if (tag === 'earliest') return 0n
    if (typeof tag === 'string') return BigInt(tag)
    if (tag && typeof tag === 'object') {
      const named = tag as { blockHash?: string; blockNumber?: string }
      if (named.blockHash) return this.#heightOf(named.blockHash)
      if (named.blockNumber) return BigInt(named.blockNumber)
    }
    return head
  }

  /** One call as a lagging node answers it; null: forward it unchanged. */
  async #lagging(call: JsonRpcCall, head: bigint): Promise<JsonRpcAnswer | 'forward'> {
    const ok = (result: unknown): JsonRpcAnswer => ({ jsonrpc: '2.0', id: call.id, result })
    const fail = (code: number, message: string): JsonRpcAnswer => ({
      jsonrpc: '2.0',
      id: call.id,
      error: { code, message },
    })
    const params = call.params ?? []
    switch (call.method) {
      case 'eth_blockNumber':
        return ok(hex(head))
      case 'eth_getBlockByNumber': {
        const tag = params[0]
        if (tag === 'latest' || tag === 'pending' || tag === 'safe' || tag === 'finalized') {
          const [answer] = await this.#forward([
            { method: call.method, params: [hex(head), params[1]] },
          ])
          return ok(answer.result)
        }
        return typeof tag === 'string' && tag.startsWith('0x') && BigInt(tag) > head
          ? ok(null)
          : 'forward'
      }
      case 'eth_getBlockByHash': {
        const height = await this.#heightOf(params[0])
        return height === null || height > head ? ok(null) : 'forward'
      }
      case 'eth_getTransactionReceipt':
      case 'eth_getTransactionByHash': {
        const [answer] = await this.#forward([call])
        const found = answer.result as { blockNumber?: string } | null
        return ok(found?.blockNumber && BigInt(found.blockNumber) > head ? null : (found ?? null))
      }
      case 'eth_getLogs': {
        const filter = params[0] ?? {}
        if (filter.blockHash) {
          const height = await this.#heightOf(filter.blockHash)
          return height === null || height > head ? fail(-32000, 'unknown block') : 'forward'
        }
        const [answer] = await this.#forward([call])
        if (answer.error) return answer
        // go-ethereum#24078: blocks above its head are left out, without an error.
        return ok(
          (answer.result as { blockNumber: string }[]).filter(
            (log) => BigInt(log.blockNumber) <= head
          )
        )
      }
      case 'eth_getBalance':
      case 'eth_call':
      case 'eth_getCode': {
        const height = await this.#stateHeight(params[1], head)
        return height === null || height > head ? fail(-32000, 'header not found') : 'forward'
      }
      case 'debug_traceBlockByHash': {
        const height = await this.#heightOf(params[0])
        return height === null || height > head
          ? fail(-32000, `block ${params[0]} not found`)
          : 'forward'
      }
      case 'debug_traceBlockByNumber':
      case 'trace_block':
        return typeof params[0] === 'string' &&
          params[0].startsWith('0x') &&
          BigInt(params[0]) > head
          ? fail(-32000, `block #${BigInt(params[0])} not found`)
          : 'forward'
      default:
        return 'forward'
    }
  }

  /** The HTTP refusal of a too wide range in this proxy's provider style; null: accepted. */
  #rangeRefusal(call: JsonRpcCall): { status: number; answer: JsonRpcAnswer } | null {
    if (this.maxLogRange === null || call.method !== 'eth_getLogs') return null
    const filter = call.params?.[0]
    if (!filter?.fromBlock || !filter?.toBlock) return null
    const from = BigInt(filter.fromBlock)
    const to = BigInt(filter.toBlock)
    if (to - from + 1n <= this.maxLogRange) return null
    const limit = this.maxLogRange
    const refusal = (status: number, code: number, message: string) => ({
      status,
      answer: { jsonrpc: '2.0' as const, id: call.id, error: { code, message } },
    })
    switch (this.rangeStyle) {
      case 'alchemy':
        return refusal(
          400,
          -32600,
          `You can make eth_getLogs requests with up to a ${limit} block range. Based on your parameters, this block range should work: [${hex(from)}, ${hex(from + limit - 1n)}]`
        )
      case 'quicknode':
        return refusal(
          413,
          -32614,
          `eth_getLogs is limited to a ${Number(limit).toLocaleString('en-US')} range`
        )
      case 'bsc':
        return refusal(200, -32000, `exceed maximum block range: ${limit}`)
      default:
        return refusal(200, -32005, 'query exceeds max block range')
    }
  }

  async #handle(incoming: IncomingMessage, outgoing: ServerResponse) {
    let body = ''
    for await (const chunk of incoming) body += chunk
    const parsed = JSON.parse(body)
    const batch = Array.isArray(parsed)
    const calls: JsonRpcCall[] = batch ? parsed : [parsed]
    const scripted = this.script.shift()
    if (scripted) return this.#refuse(outgoing, scripted.status, scripted.retryAfter, scripted.body)
    const failing = this.failLogsFrom
    if (
      failing !== null &&
      calls.some(
        (call) =>
          call.method === 'eth_getLogs' && BigInt(call.params?.[0]?.fromBlock ?? 0) >= failing
      )
    ) {
      return this.#refuse(outgoing, 503)
    }
    let wait = this.#take(calls.length)
    if (this.limitNext > 0) {
      this.limitNext--
      wait ??= 1
    }
    if (wait !== null) {
      if (this.limitStyle === '200') {
        // Inside HTTP 200, with no Retry-After: what several providers do.
        const error = { code: -32005, message: 'limit exceeded' }
        const answers = calls.map((call) => ({ jsonrpc: '2.0', id: call.id, error }))
        this.statuses.push(200)
        outgoing.writeHead(200, { 'content-type': 'application/json' })
        return outgoing.end(JSON.stringify(batch ? answers : answers[0]))
      }
      return this.#refuse(outgoing, 429, String(wait))
    }

    for (const call of calls) {
      this.calls.set(call.method, (this.calls.get(call.method) ?? 0) + 1)
      // Ranges only: a query by block hash has no fromBlock.
      const from = call.params?.[0]?.fromBlock
      if (call.method === 'eth_getLogs' && typeof from === 'string')
        this.logsFrom.push(BigInt(from))
    }

    // A range refused with an HTTP status refuses the whole request, as providers do.
    for (const call of calls) {
      const refusal = this.#rangeRefusal(call)
      if (refusal && refusal.status !== 200) {
        return this.#answer(outgoing, refusal.status, batch ? [refusal.answer] : refusal.answer)
      }
    }

    const head = this.lag > 0n ? await this.#head() : null
    const answers: (JsonRpcAnswer | null)[] = []
    const forwarded: { index: number; call: JsonRpcCall }[] = []
    for (const [index, call] of calls.entries()) {
      if (this.unsupported.has(call.method)) {
        answers[index] = {
          jsonrpc: '2.0',
          id: call.id,
          error: {
            code: -32601,
            message: `the method ${call.method} does not exist/is not available`,
          },
        }
        continue
      }
      const refusal = this.#rangeRefusal(call)
      if (refusal) {
        answers[index] = refusal.answer
        continue
      }
      const lagged = head === null ? 'forward' : await this.#lagging(call, head)
      if (lagged === 'forward') {
        answers[index] = null
        forwarded.push({ index, call })
      } else {
        answers[index] = lagged
      }
    }
    const results = await this.#forward(forwarded.map((entry) => entry.call))
    results.forEach((answer, position) => (answers[forwarded[position].index] = answer))
    for (const [index, call] of calls.entries()) {
      const answer = answers[index]!
      if (
        call.method !== 'eth_getLogs' ||
        this.maxResults === null ||
        !Array.isArray(answer.result)
      )
        continue
      if (answer.result.length > this.maxResults) {
        const filter = call.params?.[0] ?? {}
        const from = BigInt(filter.fromBlock ?? 0)
        const to = BigInt(filter.toBlock ?? 0)
        const half = from + (to - from) / 2n
        answers[index] = {
          jsonrpc: '2.0',
          id: call.id,
          error: {
            code: -32005,
            message: `query returned more than ${this.maxResults} results. Try with this block range [${hex(from)}, ${hex(half)}].`,
          },
        }
      }
    }
    this.#answer(outgoing, 200, batch ? answers : answers[0])
  }

  async start() {
    this.#server = createServer((incoming, outgoing) => {
      this.#handle(incoming, outgoing).catch(() => {
        if (!outgoing.headersSent) outgoing.writeHead(502)
        outgoing.end()
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    return this
  }

  async stop() {
    if (!this.#server) return
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()))
  }
}

/**
 * One URL in front of several nodes, each HTTP request going to one of
 * them: Infura, Alchemy, public BSC/Polygon endpoints and most self-hosted
 * setups balance this way, and one node is often a few blocks behind or on
 * another fork. `order` chooses the node: strictly in turn, or at random
 * from a seed (the same seed, the same sequence). Counts the requests each
 * node got.
 */
export class LoadBalancer {
  url = ''
  served: number[]
  #server: Server | null = null
  #next = 0
  #seed: number

  constructor(
    private readonly backends: string[],
    /** In turn, at random (seeded), or a router choosing the node from the request's body. */
    private readonly order: 'alternate' | 'random' | ((body: string) => number) = 'alternate',
    seed = 42
  ) {
    this.served = backends.map(() => 0)
    this.#seed = seed
  }

  #pick(body: string): number {
    if (typeof this.order === 'function') return this.order(body)
    if (this.order === 'alternate') return this.#next++ % this.backends.length
    // mulberry32: small, seeded, good enough to spread requests.
    let t = (this.#seed += 0x6d2b79f5)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    const random = ((t ^ (t >>> 14)) >>> 0) / 4294967296
    return Math.floor(random * this.backends.length)
  }

  async start() {
    this.#server = createServer(async (incoming, outgoing) => {
      let body = ''
      for await (const chunk of incoming) body += chunk
      const index = this.#pick(body)
      this.served[index]++
      try {
        const response = await fetch(this.backends[index], {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        })
        const headers: Record<string, string> = { 'content-type': 'application/json' }
        const retryAfter = response.headers.get('retry-after')
        if (retryAfter) headers['retry-after'] = retryAfter
        outgoing.writeHead(response.status, headers)
        outgoing.end(await response.text())
      } catch {
        outgoing.writeHead(502)
        outgoing.end()
      }
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    return this
  }

  async stop() {
    if (!this.#server) return
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()))
  }
}
