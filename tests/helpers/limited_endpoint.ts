import { createServer, type Server, type ServerResponse } from 'node:http'

/**
 * An RPC endpoint on 127.0.0.1 that limits like the real providers do: a
 * token bucket (capacity `burst`, refilled at `perSecond`) over every
 * request; an empty bucket answers 429 with a JSON error body and, unless
 * `sendRetryAfter` is off, a Retry-After header (whole seconds, as
 * providers send it). Scripted faults come first: `script` is consumed one
 * entry per request ('503', '502', '500', '429' with its Retry-After
 * seconds, 'drop' closes the socket without an answer, 'hang' never
 * answers).
 */
export type Fault = { status: number; retryAfter?: string } | 'drop' | 'hang'

export class LimitedEndpoint {
  url = ''
  /** Arrival time of every request (epoch ms) and how it was answered. */
  log: { at: number; status: number | 'drop' | 'hang' }[] = []
  script: Fault[] = []
  sendRetryAfter = true
  #tokens: number
  #refilledAt = Date.now()
  #server: Server | null = null

  constructor(
    readonly perSecond: number,
    readonly burst: number,
    readonly answer: unknown = { jsonrpc: '2.0', id: 1, result: 'ok' }
  ) {
    this.#tokens = burst
  }

  get limited() {
    return this.log.filter((entry) => entry.status === 429).length
  }

  get served() {
    return this.log.filter((entry) => entry.status === 200).length
  }

  async start() {
    this.#server = createServer((request, response) => {
      request.resume()
      request.on('end', () => this.#handle(response))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    return this
  }

  #take(now: number) {
    this.#tokens = Math.min(
      this.burst,
      this.#tokens + ((now - this.#refilledAt) / 1000) * this.perSecond
    )
    this.#refilledAt = now
    if (this.#tokens < 1) return false
    this.#tokens -= 1
    return true
  }

  #handle(response: ServerResponse) {
    const at = Date.now()
    const fault = this.script.shift()
    if (fault === 'drop') {
      this.log.push({ at, status: 'drop' })
      response.socket?.destroy()
      return
    }
    if (fault === 'hang') {
      this.log.push({ at, status: 'hang' })
      return
    }
    if (fault) {
      this.log.push({ at, status: fault.status })
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (fault.retryAfter !== undefined) headers['retry-after'] = fault.retryAfter
      response.writeHead(fault.status, headers)
      response.end(
        JSON.stringify({
          error: fault.status === 429 ? 'Too Many Requests' : 'upstream unavailable',
        })
      )
      return
    }
    if (!this.#take(at)) {
      this.log.push({ at, status: 429 })
      const wait = Math.max(1, Math.ceil((1 - this.#tokens) / this.perSecond))
      const headers: Record<string, string> = { 'content-type': 'application/json' }
      if (this.sendRetryAfter) headers['retry-after'] = String(wait)
      response.writeHead(429, headers)
      response.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          error: { code: 429, message: 'Too many requests for a specific RPC call' },
        })
      )
      return
    }
    this.log.push({ at, status: 200 })
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end(JSON.stringify(this.answer))
  }

  async stop() {
    if (!this.#server) return
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()))
    this.#server = null
  }
}
