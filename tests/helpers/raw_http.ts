import { connect } from 'node:net'

export type StreamedExchange = {
  /** HTTP status of the answer, null if none came. */
  status: number | null
  headers: Record<string, string>
  body: string
  /** Body bytes written when the first byte of the answer arrived. */
  sentBeforeAnswer: number | null
  /** Body bytes written in all. */
  sent: number
  /** The server ended or reset the connection before the whole body was written. */
  cutByServer: boolean
}

/**
 * Sends a request with a large body over a raw socket, as fast as the
 * server takes it, and reports when the answer came and whether the server
 * dropped the connection before the body was all sent. (fetch cannot tell:
 * it waits for its upload.) `chunked` sends no Content-Length.
 */
export function streamBody(
  baseUrl: string,
  options: {
    path: string
    contentType: string | null
    total: number
    chunked?: boolean
    fill?: string
  }
): Promise<StreamedExchange> {
  const url = new URL(baseUrl)
  const chunk = Buffer.alloc(64 * 1024, options.fill ?? 'x')
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname)
    let sent = 0
    let sentBeforeAnswer: number | null = null
    let answer = ''
    let finished = false

    const head = [
      `POST ${options.path} HTTP/1.1`,
      `Host: ${url.host}`,
      ...(options.contentType ? [`Content-Type: ${options.contentType}`] : []),
      options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${options.total}`,
      '',
      '',
    ].join('\r\n')

    const pump = () => {
      while (!finished && sent < options.total && !socket.destroyed) {
        const piece = chunk.subarray(0, Math.min(chunk.length, options.total - sent))
        sent += piece.length
        const flushed = socket.write(
          options.chunked
            ? Buffer.concat([
                Buffer.from(`${piece.length.toString(16)}\r\n`),
                piece,
                Buffer.from('\r\n'),
              ])
            : piece
        )
        if (!flushed) return void socket.once('drain', pump)
      }
      if (sent >= options.total && options.chunked && !socket.destroyed) socket.write('0\r\n\r\n')
    }

    const finish = () => {
      if (finished) return
      finished = true
      clearTimeout(deadline)
      socket.destroy()
      const [headText = '', ...rest] = answer.split('\r\n\r\n')
      const [statusLine, ...headerLines] = headText.split('\r\n')
      const headers: Record<string, string> = {}
      for (const line of headerLines) {
        const colon = line.indexOf(':')
        if (colon > 0)
          headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim()
      }
      const status = /^HTTP\/1\.1 (\d{3})/.exec(statusLine ?? '')
      resolve({
        status: status ? Number(status[1]) : null,
        headers,
        body: rest.join('\r\n\r\n'),
        sentBeforeAnswer,
        sent,
        cutByServer: sent < options.total,
      })
    }
    // A server that keeps reading to the end would let the whole body through
    // in far less than this; it only stops a hung test.
    const deadline = setTimeout(finish, 30_000)

    socket.on('data', (data) => {
      if (sentBeforeAnswer === null) sentBeforeAnswer = sent
      answer += data.toString('utf8')
    })
    socket.on('end', finish)
    socket.on('close', finish)
    socket.on('error', finish)
    socket.write(head)
    pump()
  })
}

/**
 * A slow client: opens a connection, sends `immediately` at once, then
 * `slowly` one byte every `intervalMs`; resolves when the connection is closed.
 */
export function trickle(
  baseUrl: string,
  options: { immediately?: string; slowly: string; intervalMs: number }
): Promise<{ closedAfterMs: number; answer: string; sentAll: boolean }> {
  const url = new URL(baseUrl)
  return new Promise((resolve) => {
    const started = Date.now()
    const socket = connect(Number(url.port), url.hostname)
    let answer = ''
    let index = 0
    if (options.immediately) socket.write(options.immediately)
    const timer = setInterval(() => {
      if (index < options.slowly.length && !socket.destroyed) socket.write(options.slowly[index++])
    }, options.intervalMs)
    // Only stops a hung test: a server that never drops the client.
    const deadline = setTimeout(() => socket.destroy(), 30_000)
    const done = () => {
      clearInterval(timer)
      clearTimeout(deadline)
      socket.destroy()
      resolve({
        closedAfterMs: Date.now() - started,
        answer,
        sentAll: index >= options.slowly.length,
      })
    }
    socket.on('data', (data) => (answer += data.toString('utf8')))
    socket.on('close', done)
    socket.on('error', () => {})
  })
}
