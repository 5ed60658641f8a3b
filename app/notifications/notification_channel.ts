/**
 * The contract of a notification channel (a chat bot, e-mail, an HTTP endpoint …):
 * what a plugin brings under `notificationChannels` (app/plugin_host/gateway_plugin.ts).
 *
 * The core decides what is said and to which channel (events, rules,
 * quiet hours, caps: app/notifications/); a channel only says it, once
 * per call, to one target, and reports what happened. Deliveries are
 * at least once: a process that dies after `send()` returned and before
 * the outcome was recorded sends again, with the same idempotencyKey.
 */

export const SEVERITIES = ['info', 'warning', 'critical'] as const
export type Severity = (typeof SEVERITIES)[number]

export type NotificationLink = { label: string; url: string }

/** One event, rendered for people (the channel formats it for its medium). */
export type NotificationMessage = {
  /** `<event id>:<channel>:<target>`: the same for every attempt of one delivery. */
  idempotencyKey: string
  eventId: number
  /** Stable event name: order.paid, callback.gave_up, daily.report … */
  event: string
  severity: Severity
  /** One line: "Order paid: 12.50 USDT on <network> (order 1042)". */
  title: string
  /** Plain-text lines under the title ("Trade ID: …"), without markup. */
  lines: string[]
  /** Into the console (absolute URLs, APP_URL), or an explorer. */
  links: NotificationLink[]
  /** The event's data as raised (a channel that posts JSON may send it as is). */
  data: Record<string, unknown>
  /** When the event was raised, epoch ms. */
  occurredAt: number
}

/**
 * What one attempt came to:
 * - delivered: the channel accepted it;
 * - retry: try again later (after retryAfterMs when the service said so:
 *   a rate-limit answer with its retry delay, a mail server's temporary 4xx, an HTTP Retry-After);
 *   `rateLimited` when that is the service's rate limit (429): the wait
 *   then spends none of the delivery's attempts (notify.max_attempts);
 * - failed: no attempt can succeed (a malformed request, a refused
 *   recipient); with `stopTarget`, this target gets nothing more until an
 *   operator clears it (a chat that blocked the bot, a chat not found),
 *   and `error` is shown on the console.
 */
export type SendOutcome =
  | { status: 'delivered' }
  | {
      status: 'retry'
      error: string
      retryAfterMs?: number
      /** The service limits its rate (HTTP 429): the wait is its pace, not a failure, and spends no attempt. */
      rateLimited?: boolean
    }
  | { status: 'failed'; error: string; stopTarget?: boolean }

export type NotificationChannel = {
  /** Lower-case; rule settings are `notify.<name>.*`. */
  name: string
  description: string
  /**
   * The targets an event goes to (chat ids, one entry for a mailing or a
   * URL): each gets its own delivery, retried on its own. Empty: the
   * channel is not configured (see `problem()`).
   */
  targets(): Promise<string[]>
  /** '' when the channel can send; else what is missing, for the console and `notifications:list`. */
  problem(): Promise<string>
  /** One attempt to one target. Throwing counts as a retry, with the error's message. */
  send(message: NotificationMessage, target: string): Promise<SendOutcome>
  /**
   * A channel that can gather events into one message (e-mail's digest).
   * While `minutes()` is above 0, the core holds this channel's deliveries
   * until the end of the current window of that many minutes (windows
   * aligned on the epoch), then calls `send()` once per target with every
   * message of the window, oldest first; the outcome applies to them all.
   */
  digest?: {
    minutes(): Promise<number>
    send(messages: NotificationMessage[], target: string): Promise<SendOutcome>
  }
  /** Releases what it holds (keep-alive connections, a mail transport's pool) on shutdown. */
  close?(): Promise<void>
}
