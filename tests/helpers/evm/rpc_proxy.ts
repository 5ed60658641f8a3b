import { createServer, request as httpRequest, type Server } from 'node:http'

/**
 * A JSON-RPC proxy in front of a node: counts the calls by method (a batch
 * counts each of its calls) and can refuse eth_getLogs over too wide a
 * range, like public endpoints do. It can limit like a provider: a token
 * bucket over calls (a batch takes one token per call, as providers bill
 * them) answering HTTP 429 with Retry-After and a JSON error body, and
 * scripted answers (`script`: one per HTTP request, e.g. a 429 or a 503)
 * that come first.
 */
export class RpcProxy {
  url = ''
  calls = new Map<string, number>()
  maxLogRange: bigint | null = null
  /** HTTP statuses answered, in order (200 for forwarded requests). */
  statuses: number[] = []
  script: { status: number; retryAfter?: string }[] = []
  /** fromBlock of every eth_getLogs forwarded. */
  logsFrom: bigint[] = []
  /** eth_getLogs from this block on are answered 503 (an endpoint that went down midway); null: never. */
  failLogsFrom: bigint | null = null
  #bucket: { perSecond: number; burst: number; tokens: number; at: number } | null = null
  #server: Server | null = null

  constructor(private readonly target: string) {}

  total() {
    return [...this.calls.values()].reduce((sum, count) => sum + count, 0)
  }

  reset() {
    this.calls.clear()
    this.statuses = []
    this.script = []
    this.failLogsFrom = null
    this.logsFrom = []
    this.#bucket = null
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
    bucket.tokens = Math.min(bucket.burst, bucket.tokens + ((now - bucket.at) / 1000) * bucket.perSecond)
    bucket.at = now
    if (bucket.tokens >= calls) {
      bucket.tokens -= calls
      return null
    }
    return Math.max(1, Math.ceil((calls - bucket.tokens) / bucket.perSecond))
  }

  #refuse(outgoing: import('node:http').ServerResponse, status: number, retryAfter?: string) {
    this.statuses.push(status)
    const headers: Record<string, string> = { 'content-type': 'application/json' }
    if (retryAfter !== undefined) headers['retry-after'] = retryAfter
    outgoing.writeHead(status, headers)
    const message = status === 429 ? 'Too Many Requests' : 'Service Unavailable'
    outgoing.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32005, message } }))
  }

  async start() {
    this.#server = createServer((incoming, outgoing) => {
      let body = ''
      incoming.on('data', (chunk) => (body += chunk))
      incoming.on('end', () => {
        const parsed = JSON.parse(body)
        const calls = Array.isArray(parsed) ? parsed : [parsed]
        const scripted = this.script.shift()
        if (scripted) return this.#refuse(outgoing, scripted.status, scripted.retryAfter)
        const failing = this.failLogsFrom
        if (failing !== null && calls.some((call) => call.method === 'eth_getLogs' && BigInt(call.params?.[0]?.fromBlock ?? 0) >= failing)) {
          return this.#refuse(outgoing, 503)
        }
        const wait = this.#take(calls.length)
        if (wait !== null) return this.#refuse(outgoing, 429, String(wait))
        this.statuses.push(200)
        for (const call of calls) if (call.method === 'eth_getLogs') this.logsFrom.push(BigInt(call.params?.[0]?.fromBlock ?? 0))
        for (const call of calls) this.calls.set(call.method, (this.calls.get(call.method) ?? 0) + 1)
        const refused = calls.find((call) => this.#tooWide(call))
        if (refused) {
          const error = { jsonrpc: '2.0', id: refused.id, error: { code: -32005, message: 'query exceeds max block range' } }
          outgoing.writeHead(200, { 'content-type': 'application/json' })
          return outgoing.end(JSON.stringify(Array.isArray(parsed) ? [error] : error))
        }
        const forward = httpRequest(this.target, { method: 'POST', headers: { 'content-type': 'application/json' } }, (answer) => {
          outgoing.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' })
          answer.pipe(outgoing)
        })
        forward.on('error', () => {
          outgoing.writeHead(502)
          outgoing.end()
        })
        forward.end(body)
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    return this
  }

  #tooWide(call: { method: string; params?: { fromBlock?: string; toBlock?: string }[] }) {
    if (this.maxLogRange === null || call.method !== 'eth_getLogs') return false
    const filter = call.params?.[0]
    if (!filter?.fromBlock || !filter?.toBlock) return false
    return BigInt(filter.toBlock) - BigInt(filter.fromBlock) + 1n > this.maxLogRange
  }

  async stop() {
    if (!this.#server) return
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()))
  }
}
