import { createServer, request as httpRequest, type Server } from 'node:http'

/**
 * A JSON-RPC proxy in front of a node: counts the calls by method (a batch
 * counts each of its calls) and can refuse eth_getLogs over too wide a
 * range, like public endpoints do.
 */
export class RpcProxy {
  url = ''
  calls = new Map<string, number>()
  maxLogRange: bigint | null = null
  #server: Server | null = null

  constructor(private readonly target: string) {}

  total() {
    return [...this.calls.values()].reduce((sum, count) => sum + count, 0)
  }

  reset() {
    this.calls.clear()
  }

  async start() {
    this.#server = createServer((incoming, outgoing) => {
      let body = ''
      incoming.on('data', (chunk) => (body += chunk))
      incoming.on('end', () => {
        const parsed = JSON.parse(body)
        const calls = Array.isArray(parsed) ? parsed : [parsed]
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
