import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP relay on 127.0.0.1 in front of a node (e.g. anvil's WebSocket
 * endpoint), so that a test can cut the connections (drop), refuse new
 * ones for a while (close) and let them through again (open).
 */
export class TcpRelay {
  port = 0
  /** Connections accepted so far. */
  accepted = 0
  #server: Server | null = null
  #sockets = new Set<Socket>()

  constructor(public targetPort: number) {}

  get wsUrl() {
    return `ws://127.0.0.1:${this.port}`
  }

  async open() {
    if (this.#server) return this
    const server = createServer((client) => {
      this.accepted++
      const upstream = createConnection({ host: '127.0.0.1', port: this.targetPort })
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket)
        socket.on('close', () => this.#sockets.delete(socket))
        socket.on('error', () => {})
      }
      client.pipe(upstream).pipe(client)
      client.on('close', () => upstream.destroy())
      upstream.on('close', () => client.destroy())
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      // The first time on a port the system gives; reopened on the same one (the URL the test gave out).
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    const address = server.address()
    if (this.port === 0 && typeof address === 'object' && address) this.port = address.port
    this.#server = server
    return this
  }

  /** Cuts every connection through the relay (the peers see them reset). */
  drop() {
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
  }

  /** Stops listening (new connections refused) and cuts the open ones. */
  async close() {
    const server = this.#server
    this.#server = null
    this.drop()
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** Polls `check` every 50 ms until it returns true; false after `timeoutMs`. */
export async function eventually(
  check: () => Promise<boolean> | boolean,
  timeoutMs: number
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return check()
}
