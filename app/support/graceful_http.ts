import type { IncomingMessage, Server, ServerResponse } from 'node:http'

/**
 * Lets a Node HTTP server close without dropping a request or waiting on
 * idle keep-alive clients.
 *
 * `server.close()` stops accepting and closes the connections idle at that
 * moment, but a keep-alive connection whose request is still running would
 * stay open after its answer until the client or the keep-alive timeout
 * closes it, and would keep the process alive. So, once draining:
 * - every answer not yet started carries `Connection: close`, and Node
 *   closes its connection once it is sent;
 * - a request that still arrives on an open connection is answered too,
 *   with `Connection: close`;
 * - after each answer, connections that became idle are closed.
 */
export class GracefulHttp {
  #inFlight = new Set<ServerResponse>()
  #server: Server | null = null
  #draining = false
  /** Told the number of requests in flight whenever it changes (the metrics gauge). */
  onCount: (inFlight: number) => void = () => {}

  /** Wraps the request handler given to `createServer`. */
  wrap(handler: (request: IncomingMessage, response: ServerResponse) => unknown) {
    return (request: IncomingMessage, response: ServerResponse) => {
      this.#inFlight.add(response)
      this.onCount(this.#inFlight.size)
      if (this.#draining) this.#closeAfter(response)
      response.once('close', () => {
        this.#inFlight.delete(response)
        this.onCount(this.#inFlight.size)
        if (this.#draining) this.#server?.closeIdleConnections()
      })
      return handler(request, response)
    }
  }

  attach(server: Server) {
    this.#server = server
    return server
  }

  /** Requests being answered now. */
  get inFlight(): number {
    return this.#inFlight.size
  }

  /**
   * Starts draining: stop accepting and close idle connections (the caller
   * awaits the server's own close, which resolves once every connection is
   * gone).
   */
  drain() {
    if (this.#draining) return
    this.#draining = true
    for (const response of this.#inFlight) this.#closeAfter(response)
    this.#server?.closeIdleConnections()
  }

  #closeAfter(response: ServerResponse) {
    if (response.headersSent) return
    response.shouldKeepAlive = false
    response.setHeader('connection', 'close')
  }
}
