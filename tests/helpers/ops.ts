import http from 'node:http'
import net from 'node:net'

export type Answer = { status: number; headers: http.IncomingHttpHeaders; body: string }

/** One HTTP request through `agent` (keep-alive or not); rejects on a reset or a hang-up. */
export function send(
  url: string,
  options: {
    method?: string
    body?: string
    headers?: Record<string, string>
    agent?: http.Agent
  } = {}
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      url,
      {
        method: options.method ?? 'GET',
        agent: options.agent,
        headers: {
          accept: 'application/json',
          ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...options.headers,
        },
      },
      (response) => {
        let body = ''
        response.setEncoding('utf8')
        response.on('data', (chunk) => (body += chunk))
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body })
        )
        response.on('error', reject)
      }
    )
    request.on('error', reject)
    request.end(options.body)
  })
}

/** Polls `condition` every 50 ms until it holds (or throws after `timeoutMs`). */
export async function waitFor(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000
) {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting for ${what}`)
}

/** The value of one series of a Prometheus text exposition (labels as written), or undefined. */
export function sample(text: string, series: string): number | undefined {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue
    const space = line.lastIndexOf(' ')
    if (line.slice(0, space) === series) return Number(line.slice(space + 1))
  }
  return undefined
}

/**
 * A TCP proxy on 127.0.0.1 in front of a database: `down()` closes it and
 * cuts every connection through it (the database is unreachable for a
 * process that connects through the proxy), `up()` opens it again on the
 * same port. The database itself is never touched.
 */
export class TcpProxy {
  #server: net.Server | null = null
  #sockets = new Set<net.Socket>()
  port = 0

  constructor(
    readonly targetHost: string,
    readonly targetPort: number
  ) {}

  async up() {
    const server = net.createServer((client) => {
      const upstream = net.connect(this.targetPort, this.targetHost)
      for (const socket of [client, upstream]) {
        this.#sockets.add(socket)
        socket.once('close', () => this.#sockets.delete(socket))
        socket.on('error', () => {})
      }
      client.pipe(upstream)
      upstream.pipe(client)
      client.once('close', () => upstream.destroy())
      upstream.once('close', () => client.destroy())
    })
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => resolve())
    })
    const address = server.address()
    this.port = typeof address === 'object' && address ? address.port : 0
    this.#server = server
    return this
  }

  async down() {
    const server = this.#server
    this.#server = null
    if (!server) return
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
