import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

export type StubHandler = (request: IncomingMessage, response: ServerResponse, body: string) => void

/** A throw-away HTTP server on 127.0.0.1 that records what it was asked. */
export class HttpStub {
  requests: { method: string; url: string; body: string; headers: IncomingMessage['headers'] }[] =
    []
  handler: StubHandler = (_request, response) => response.end()
  #server: Server | null = null
  url = ''

  /** `port`: this one rather than any free one. */
  async start(port = 0) {
    this.#server = createServer((request, response) => {
      let body = ''
      request.on('data', (chunk) => (body += chunk))
      request.on('end', () => {
        this.requests.push({
          method: request.method ?? '',
          url: request.url ?? '',
          body,
          headers: request.headers,
        })
        this.handler(request, response, body)
      })
    })
    await new Promise<void>((resolve) => this.#server!.listen(port, '127.0.0.1', resolve))
    const address = this.#server.address()
    this.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    return this
  }

  json(payload: unknown, status = 200) {
    this.handler = (_request, response) => {
      response.writeHead(status, { 'content-type': 'application/json' })
      response.end(JSON.stringify(payload))
    }
  }

  async stop() {
    if (!this.#server) return
    this.#server.closeAllConnections()
    await new Promise<void>((resolve) => this.#server!.close(() => resolve()))
    this.#server = null
  }
}
