import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'
import { simpleParser, type ParsedMail } from 'mailparser'

/** A self-signed certificate for `localhost`, made once per process with openssl. */
let certificate: { key: string; cert: string } | null = null

export function testCertificate(): { key: string; cert: string } {
  if (certificate) return certificate
  const dir = mkdtempSync(join(tmpdir(), 'smtp-cert-'))
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'pipe' }
    )
    certificate = {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    }
    return certificate
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** A message the server accepted: the SMTP envelope, the raw text and what mailparser made of it. */
export type ReceivedMail = {
  from: string
  to: string[]
  user: string | undefined
  /** Whether the session was encrypted (STARTTLS or implicit TLS) when the message came. */
  secure: boolean
  raw: string
  parsed: ParsedMail
}

export type SmtpTestServerOptions = {
  /** starttls: offered on a plain connection (the default); tls: TLS from the first byte; none: neither. */
  tls?: 'starttls' | 'tls' | 'none'
  /** Credentials the server accepts; `null`: no AUTH at all. */
  auth?: { user: string; password: string } | null
}

/**
 * A real SMTP server in this process (the `smtp-server` package), on
 * 127.0.0.1 with a self-signed certificate: AUTH PLAIN/LOGIN checked against
 * one user, STARTTLS or implicit TLS, every accepted message parsed.
 *
 * Switches: `rejectAuth` (535 whatever the password), `authFailureReply`
 * (the text of that 535), `rcptReply` (answer
 * RCPT TO with that code, e.g. 451 or 550), `down()` / `up()` (stop
 * listening, then listen again on the same port).
 */
export class SmtpTestServer {
  readonly user: string
  readonly password: string
  readonly tls: 'starttls' | 'tls' | 'none'
  readonly messages: ReceivedMail[] = []
  /** Every AUTH attempt: user name and whether it was accepted. */
  readonly logins: { user: string; accepted: boolean }[] = []
  /** Connections opened (counted before any command). */
  connections = 0
  /** Refuse every login (535), whatever the password. */
  rejectAuth = false
  /** The text of a 535 made from the attempt (a server that echoes what it was sent); null: a plain one. */
  authFailureReply: ((user: string, password: string) => string) | null = null
  rcptReply: { code: number; message: string } | null = null
  port = 0
  #auth: boolean
  #server: SMTPServer | null = null
  #waiters: (() => void)[] = []

  constructor(options: SmtpTestServerOptions = {}) {
    this.tls = options.tls ?? 'starttls'
    const auth =
      options.auth === undefined ? { user: 'gateway', password: 'smtp-Pa55-word' } : options.auth
    this.#auth = auth !== null
    this.user = auth?.user ?? ''
    this.password = auth?.password ?? ''
  }

  get running() {
    return this.#server !== null
  }

  /** Starts listening (on a free port the first time, on the same port after `down()`). */
  async start() {
    if (this.#server) return
    const { key, cert } = testCertificate()
    const options: SMTPServerOptions = {
      secure: this.tls === 'tls',
      key,
      cert,
      // none: STARTTLS neither offered nor accepted.
      hideSTARTTLS: this.tls === 'none',
      authMethods: ['PLAIN', 'LOGIN'],
      authOptional: !this.#auth,
      disabledCommands: [
        ...(this.#auth ? [] : ['AUTH']),
        ...(this.tls === 'none' ? ['STARTTLS'] : []),
      ],
      // A plain session may still log in when the server offers no TLS at all (a local relay).
      allowInsecureAuth: this.tls === 'none',
      disableReverseLookup: true,
      logger: false,
      closeTimeout: 200,
      onConnect: (_session, callback) => {
        this.connections++
        callback()
      },
      onAuth: (auth, _session, callback) => {
        const accepted =
          !this.rejectAuth && auth.username === this.user && auth.password === this.password
        this.logins.push({ user: auth.username ?? '', accepted })
        if (!accepted) {
          const reply =
            this.authFailureReply?.(auth.username ?? '', auth.password ?? '') ??
            'Invalid username or password'
          const error = new Error(reply) as Error & { responseCode: number }
          error.responseCode = 535
          return callback(error)
        }
        callback(null, { user: auth.username })
      },
      onRcptTo: (_address, _session, callback) => {
        if (!this.rcptReply) return callback()
        const error = new Error(this.rcptReply.message) as Error & { responseCode: number }
        error.responseCode = this.rcptReply.code
        callback(error)
      },
      onData: (stream, session, callback) => {
        const chunks: Buffer[] = []
        stream.on('data', (chunk: Buffer) => chunks.push(chunk))
        stream.on('end', () => {
          const raw = Buffer.concat(chunks).toString('utf8')
          simpleParser(raw)
            .then((parsed) => {
              this.messages.push({
                from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
                to: session.envelope.rcptTo.map((recipient) => recipient.address),
                user: session.user as string | undefined,
                secure: session.secure,
                raw,
                parsed,
              })
              for (const wake of this.#waiters.splice(0)) wake()
              callback()
            })
            .catch((error: Error) => callback(error))
        })
      },
    }
    const server = new SMTPServer(options)
    server.on('error', () => {}) // a client that goes away mid-session is not the test's failure
    await new Promise<void>((resolve, reject) => {
      server.server.once('error', reject)
      server.listen(this.port, '127.0.0.1', () => {
        server.server.off('error', reject)
        resolve()
      })
    })
    this.port = (server.server.address() as { port: number }).port
    this.#server = server
  }

  /** Stops listening and drops the open sessions; the port stays this server's for `up()`. */
  async down() {
    const server = this.#server
    if (!server) return
    this.#server = null
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }

  /** Listens again on the same port. */
  async up() {
    await this.start()
  }

  async stop() {
    await this.down()
  }

  /** Forgets the messages and switches (the server keeps running). */
  reset() {
    this.messages.length = 0
    this.logins.length = 0
    this.connections = 0
    this.rejectAuth = false
    this.authFailureReply = null
    this.rcptReply = null
  }

  /** Resolves once `count` messages have arrived; rejects after `timeoutMs`. */
  async waitForMessages(count: number, timeoutMs = 5000): Promise<ReceivedMail[]> {
    const deadline = Date.now() + timeoutMs
    while (this.messages.length < count) {
      const left = deadline - Date.now()
      if (left <= 0)
        throw new Error(`expected ${count} messages, the SMTP server has ${this.messages.length}`)
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left)
        this.#waiters.push(() => {
          clearTimeout(timer)
          resolve()
        })
      })
    }
    return this.messages.slice(0, count)
  }
}
