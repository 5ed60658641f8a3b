import type { IncomingMessage, Server, ServerResponse } from 'node:http'
import { Server as NetServer } from 'node:net'

/**
 * Lets a Node HTTP server close without dropping a request or waiting on
 * idle keep-alive clients.
 *
 * `server.close()` stops accepting and closes the connections idle at that
 * moment, but a keep-alive connection whose request is still running would
 * stay open after its answer until the client or the keep-alive timeout
 * closes it, and would keep the process alive (a busy client would keep it
 * forever). So, once draining:
 * - every answer not yet started carries `Connection: close`, and Node
 *   closes its connection once it is sent;
 * - a request that still arrives on an open connection is answered too,
 *   with `Connection: close`;
 * - after a short grace, idle connections are closed, and every one that
 *   becomes idle afterwards.
 */
export class GracefulHttp {
  #inFlight = new Set<ServerResponse>()
  #server: Server | null = null
  #draining = false
  #closingIdle = false
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
        if (this.#closingIdle) this.#server?.closeIdleConnections()
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
   * Starts draining: the listener closes now (a new connection is refused
   * at connect, before anything is sent), the answers to come carry
   * `Connection: close`, and a request that arrives meanwhile on an open
   * keep-alive connection is still answered. Idle connections are closed
   * afterwards by the server's own close() (the caller waits a moment
   * first), so that a client that has just written a request on one is
   * answered rather than reset.
   */
  drain() {
    if (this.#draining) return
    this.#draining = true
    for (const response of this.#inFlight) this.#closeAfter(response)
    // net.Server's close: stop listening without closing idle connections yet.
    if (this.#server?.listening) NetServer.prototype.close.call(this.#server)
  }

  /**
   * Closes the connections idle now, and from now on each one that becomes
   * idle (an answer whose headers had gone out before draining began keeps
   * its connection open otherwise).
   */
  closeIdle() {
    this.#closingIdle = true
    this.#server?.closeIdleConnections()
  }

  #closeAfter(response: ServerResponse) {
    if (response.headersSent) return
    response.shouldKeepAlive = false
    response.setHeader('connection', 'close')
  }
}
