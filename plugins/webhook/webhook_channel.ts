import { createHmac } from 'node:crypto'
import { pluginSettings } from '#settings/settings_service'
import { booleanSetting, stringSetting, urlSetting } from '#settings/setting_types'
import { SecretPurpose, revealSecret } from '#support/crypto/secret_box'
import type {
  NotificationChannel,
  NotificationMessage,
  SendOutcome,
} from '#notifications/notification_channel'

export const WEBHOOK_SETTINGS = {
  'notify.webhook.url': urlSetting(
    '',
    'Operator URL that receives each notification as a signed JSON POST'
  ),
  'notify.webhook.secret': stringSetting(
    '',
    'Shared secret of the webhook signature (HMAC-SHA256 of "<timestamp>.<body>")',
    { maxLength: 200, secret: true }
  ),
  'notify.webhook.allow_private_targets': booleanSetting(
    false,
    'Allow the operator webhook to loopback, private and link-local addresses (off: refused after DNS resolution)'
  ),
}

const webhookSettings = pluginSettings(WEBHOOK_SETTINGS)

/** Seconds a receiver should accept a timestamp either side of its clock (docs/notifications.md). */
export const WEBHOOK_REPLAY_WINDOW_SECONDS = 300
const TIMEOUT_MS = 10_000

/** The signature header's value: `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
export function webhookSignature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}

/** The JSON body of one notification. */
export function webhookBody(message: NotificationMessage): string {
  return JSON.stringify({
    id: message.idempotencyKey,
    event: message.event,
    severity: message.severity,
    title: message.title,
    lines: message.lines,
    links: message.links,
    data: message.data,
    occurred_at: new Date(message.occurredAt).toISOString(),
  })
}

/** Seconds of a Retry-After header (a number of seconds or an HTTP date), as ms; undefined when absent. */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header
  if (!value) return undefined
  const seconds = Number(value)
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds, 3600) * 1000
  const date = Date.parse(value)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.min(date - Date.now(), 3_600_000))
}

/**
 * The operator's webhook: each notification POSTed as JSON, signed, with
 * an Idempotency-Key the receiver can de-duplicate on (deliveries are at
 * least once), through the callbacks' SSRF-guarded client.
 */
export const webhookChannel: NotificationChannel = {
  name: 'webhook',
  description: 'Signed JSON POST to an operator URL',

  async targets() {
    const url = await webhookSettings.get('notify.webhook.url')
    return url ? [url] : []
  },

  async problem() {
    if (!(await webhookSettings.get('notify.webhook.url'))) return 'notify.webhook.url is empty'
    if (!(await webhookSettings.get('notify.webhook.secret')))
      return 'notify.webhook.secret is empty (the receiver could not check the signature)'
    return ''
  },

  async send(message, target): Promise<SendOutcome> {
    const stored = await webhookSettings.get('notify.webhook.secret')
    if (!stored) return { status: 'failed', error: 'notify.webhook.secret is empty' }
    const secret = revealSecret(stored, SecretPurpose.setting('notify.webhook.secret'))
    const { safeRequest, ForbiddenTargetError } = await import('#callbacks/safe_http')
    const body = webhookBody(message)
    const timestamp = Math.floor(Date.now() / 1000)
    let response
    try {
      response = await safeRequest(
        {
          method: 'POST',
          url: target,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'crypto-pay-gateway-notify/1',
            'idempotency-key': message.idempotencyKey,
            'x-gateway-event': message.event,
            'x-gateway-timestamp': String(timestamp),
            'x-gateway-signature': webhookSignature(secret, timestamp, body),
          },
          body,
        },
        {
          timeoutMs: TIMEOUT_MS,
          allowPrivateTargets: await webhookSettings.get('notify.webhook.allow_private_targets'),
          maxBodyBytes: 2048,
        }
      )
    } catch (error) {
      if (error instanceof ForbiddenTargetError) return { status: 'failed', error: error.message }
      return { status: 'retry', error: error instanceof Error ? error.message : String(error) }
    }
    if (response.status >= 200 && response.status < 300) return { status: 'delivered' }
    const excerpt = response.body.slice(0, 200).replace(/\s+/g, ' ').trim()
    const error = `HTTP ${response.status}${excerpt ? `: ${excerpt}` : ''}`
    if (response.status === 429 || response.status === 408 || response.status >= 500)
      return {
        status: 'retry',
        error,
        retryAfterMs: retryAfterMs(response.headers['retry-after']),
        rateLimited: response.status === 429,
      }
    return { status: 'failed', error }
  },
}
