import { createHash } from 'node:crypto'
import type { SMTPTransportOptions, Transporter } from 'nodemailer'
import type {
  NotificationChannel,
  NotificationMessage,
  SendOutcome,
} from '#notifications/notification_channel'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import { emailSettings, parseFrom, type TlsMode } from '#plugins/email/email_settings'
import {
  oneLine,
  renderDigest,
  renderMessage,
  type RenderedMail,
} from '#plugins/email/email_message'

/** Connecting, the server's greeting, and any silence of the socket: each at most this long. */
export const SMTP_TIMEOUT_MS = 15_000

type EmailConfig = {
  host: string
  port: number
  tls: TlsMode
  rejectUnauthorized: boolean
  user: string
  password: string
  from: { name: string; address: string } | null
  recipients: string[]
}

/** What nodemailer puts on its errors. */
type SmtpError = Error & {
  code?: string
  responseCode?: number
  response?: string
  command?: string
}

/** Certificate errors of node:tls: the server's certificate is not trusted. */
const CERTIFICATE_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
])

/** Network failures: the server is down, unreachable or too slow; later may do. */
const CONNECTION_CODES = new Set([
  'ECONNECTION',
  'ETIMEDOUT',
  'ESOCKET',
  'EDNS',
  'ECONNREFUSED',
  'ECONNRESET',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
])

/**
 * The e-mail channel: each event (or each digest) is one message to every
 * recipient at once, over SMTP with nodemailer, loaded on first use (a web
 * process that sends no mail never loads it).
 */
export class EmailChannel implements NotificationChannel {
  readonly name = 'email'
  readonly description = 'E-mail through an SMTP server'

  #transport: Transporter | null = null
  #transportKey = ''

  readonly digest = {
    minutes: () => emailSettings.get('notify.email.digest_minutes'),
    send: (messages: NotificationMessage[], target: string) =>
      messages.length === 0
        ? Promise.resolve<SendOutcome>({ status: 'delivered' })
        : this.#deliver(target, (domain) => renderDigest(messages, domain), 'digest'),
  }

  async targets(): Promise<string[]> {
    const recipients = await emailSettings.get('notify.email.recipients')
    return recipients.length > 0 ? [recipients.join(',')] : []
  }

  async problem(): Promise<string> {
    return this.#problemOf(await this.#config())
  }

  send(message: NotificationMessage, target: string): Promise<SendOutcome> {
    return this.#deliver(target, (domain) => renderMessage(message, domain), message.event)
  }

  async close(): Promise<void> {
    this.#transport?.close()
    this.#transport = null
    this.#transportKey = ''
  }

  async #config(): Promise<EmailConfig> {
    const [host, port, tls, rejectUnauthorized, user, password, from, recipients] =
      await Promise.all([
        emailSettings.get('notify.email.host'),
        emailSettings.get('notify.email.port'),
        emailSettings.get('notify.email.tls'),
        emailSettings.get('notify.email.tls_reject_unauthorized'),
        emailSettings.get('notify.email.user'),
        emailSettings.get('notify.email.password'),
        emailSettings.get('notify.email.from'),
        emailSettings.get('notify.email.recipients'),
      ])
    return {
      host,
      port,
      tls,
      rejectUnauthorized,
      user,
      password,
      from: from === '' ? null : parseFrom(from),
      recipients,
    }
  }

  #problemOf(config: EmailConfig): string {
    const missing = [
      config.host === '' ? 'notify.email.host' : null,
      config.from === null ? 'notify.email.from' : null,
      config.recipients.length === 0 ? 'notify.email.recipients' : null,
    ].filter((key) => key !== null)
    if (missing.length > 0) return `not configured: set ${missing.join(', ')}`
    if (config.user !== '' && config.password === '')
      return 'notify.email.user is set but notify.email.password is empty'
    return ''
  }

  async #deliver(
    target: string,
    render: (domain: string) => RenderedMail,
    event: string
  ): Promise<SendOutcome> {
    const config = await this.#config()
    const problem = this.#problemOf(config)
    // Settings may be fixed before the next attempt: nothing is lost meanwhile.
    if (problem !== '') return { status: 'retry', error: `e-mail ${problem}` }
    const to = target
      .split(',')
      .map((address) => address.trim())
      .filter((address) => address !== '')
    if (to.length === 0) return { status: 'failed', error: 'no recipient in this delivery' }

    let password: string
    try {
      password = revealSecret(config.password, SecretPurpose.setting('notify.email.password'))
    } catch (error) {
      return { status: 'failed', error: (error as Error).message }
    }

    const from = config.from!
    const mail = render(from.address.slice(from.address.lastIndexOf('@') + 1))
    const transport = await this.#transportFor(config, password)
    try {
      await transport.sendMail({
        from: from.name === '' ? from.address : { name: oneLine(from.name), address: from.address },
        to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: mail.messageId,
        headers: { 'X-Gateway-Event': oneLine(event, 100) },
        disableFileAccess: true,
        disableUrlAccess: true,
      })
      return { status: 'delivered' }
    } catch (error) {
      return outcomeOf(error as SmtpError, config, password)
    }
  }

  /** The transport for these settings; a change of any of them makes a new one. */
  async #transportFor(config: EmailConfig, password: string): Promise<Transporter> {
    const key = createHash('sha256')
      .update(
        JSON.stringify([
          config.host,
          config.port,
          config.tls,
          config.rejectUnauthorized,
          config.user,
          password,
        ])
      )
      .digest('hex')
    if (this.#transport && this.#transportKey === key) return this.#transport
    this.#transport?.close()
    const { createTransport } = await import('nodemailer')
    const options: SMTPTransportOptions = {
      host: config.host,
      port: config.port,
      secure: config.tls === 'tls',
      // starttls: refuse to go on in plain text when the server offers no STARTTLS.
      requireTLS: config.tls === 'starttls',
      ignoreTLS: config.tls === 'none',
      connectionTimeout: SMTP_TIMEOUT_MS,
      greetingTimeout: SMTP_TIMEOUT_MS,
      socketTimeout: SMTP_TIMEOUT_MS,
      dnsTimeout: SMTP_TIMEOUT_MS,
      tls: { rejectUnauthorized: config.rejectUnauthorized },
      auth: config.user === '' ? undefined : { user: config.user, pass: password },
      logger: false,
      debug: false,
    }
    this.#transport = createTransport(options)
    this.#transportKey = key
    return this.#transport
  }
}

/** An SMTP failure as a delivery outcome, worded for the operator, never showing the password. */
export function outcomeOf(error: SmtpError, config: EmailConfig, password: string): SendOutcome {
  const where = `${config.host}:${config.port}`
  const detail = scrub(oneLine(error.message || String(error), 300), config.user, password)
  const code = error.code ?? ''
  const responseCode = typeof error.responseCode === 'number' ? error.responseCode : null
  const cause = (error as { cause?: { code?: string } }).cause

  if (code === 'EAUTH' || code === 'ENOAUTH') {
    if (responseCode !== null && responseCode >= 400 && responseCode < 500)
      return { status: 'retry', error: `SMTP login at ${where} refused for now: ${detail}` }
    return {
      status: 'failed',
      error: `SMTP login at ${where} failed (${detail}): check notify.email.user and notify.email.password`,
    }
  }
  if (
    CERTIFICATE_CODES.has(code) ||
    (cause?.code && CERTIFICATE_CODES.has(cause.code)) ||
    /certificate/i.test(detail)
  ) {
    return {
      status: 'failed',
      error: `the certificate of the SMTP server ${where} is not trusted (${detail}); fix it, or turn notify.email.tls_reject_unauthorized off for a relay you trust`,
    }
  }
  if (code === 'ETLS') {
    return {
      status: 'failed',
      error: `the SMTP server ${where} offers no STARTTLS, which notify.email.tls=starttls requires (${detail}); nothing was sent in plain text`,
    }
  }
  if (responseCode !== null) {
    // 5xx: refused for good (503, a bad sequence of commands, is the session's, not the message's).
    if (responseCode >= 500 && responseCode !== 503)
      return { status: 'failed', error: `the SMTP server ${where} refused the message: ${detail}` }
    if (responseCode >= 400)
      return { status: 'retry', error: `the SMTP server ${where} deferred the message: ${detail}` }
  }
  if (CONNECTION_CODES.has(code))
    return { status: 'retry', error: `SMTP server ${where} unreachable: ${detail}` }
  return { status: 'retry', error: `sending through ${where} failed: ${detail}` }
}

/** Removes the password (and the AUTH PLAIN / LOGIN encodings of it) from a text. */
function scrub(text: string, user: string, password: string): string {
  if (password === '') return text
  const forms = [
    password,
    Buffer.from(password).toString('base64'),
    Buffer.from(`\u0000${user}\u0000${password}`).toString('base64'),
  ]
  let result = text
  for (const form of forms) result = result.split(form).join('***')
  return result
}

export const emailChannel = new EmailChannel()
