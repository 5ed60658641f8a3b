import env from '#start/env'
import type { NotificationLink, Severity } from '#notifications/notification_channel'

type Data = Record<string, any>

/** What an event says: its usual severity, and its text from its data. */
type EventDefinition = {
  severity: Severity
  describe: string
  render(data: Data): { title: string; lines: string[]; links: NotificationLink[] }
}

/** The console page of a path, absolute (APP_URL). */
export function consoleUrl(path: string): string {
  return `${env.get('APP_URL', 'http://localhost:3333').replace(/\/+$/, '')}/admin${path}`
}

const orderLink = (data: Data): NotificationLink[] =>
  data.trade_id
    ? [{ label: 'Order', url: consoleUrl(`/orders/${encodeURIComponent(data.trade_id)}`) }]
    : []

const amount = (data: Data) =>
  [data.amount, data.token, data.network ? `on ${data.network}` : ''].filter(Boolean).join(' ')

const orderLines = (data: Data) =>
  [
    `Trade ID: ${data.trade_id}`,
    `Merchant order: ${data.order_id}`,
    data.fiat_amount
      ? `Price: ${data.fiat_amount} ${String(data.currency ?? '').toUpperCase()}`
      : '',
    data.reference ? `Transaction: ${data.reference}` : '',
  ].filter(Boolean)

/**
 * Every event the gateway raises, by its stable name (docs/notifications.md
 * lists them with examples). A channel's rules choose among them by name,
 * prefix (order.*) and severity.
 */
export const NOTIFICATION_EVENTS: Record<string, EventDefinition> = {
  'order.paid': {
    severity: 'info',
    describe: 'an order was paid',
    render: (data) => ({
      title: `Order paid: ${amount(data)}`,
      lines: orderLines(data),
      links: orderLink(data),
    }),
  },
  'order.paid_late': {
    severity: 'warning',
    describe: 'an order was credited after it had expired or been closed',
    render: (data) => ({
      title: `Late payment credited: ${amount(data)} (order was ${data.previous_status})`,
      lines: orderLines(data),
      links: orderLink(data),
    }),
  },
  'payment.unmatched': {
    severity: 'warning',
    describe: 'a payment matched no order (or a balance rose unexplained)',
    render: (data) => ({
      title:
        data.kind === 'unexplained'
          ? `Unexplained incoming amount on ${data.network}: ${data.amount} ${data.token}`
          : `Unmatched payment on ${data.network}: ${data.amount || '?'} ${data.token}`,
      lines: [
        `Address: ${data.to}`,
        data.reference ? `Transaction: ${data.reference}` : '',
        `Reason: ${data.reason}`,
      ].filter(Boolean),
      links: [{ label: 'Unmatched payments', url: consoleUrl('/unmatched') }],
    }),
  },
  'callback.failing': {
    severity: 'warning',
    describe: 'a merchant callback failed N attempts in a row (notify.callback_failing_after)',
    render: (data) => ({
      title: `Callback failing: order ${data.trade_id}, ${data.attempts} attempts`,
      lines: [`Merchant order: ${data.order_id}`, `Last error: ${data.error}`],
      links: [{ label: 'Callback', url: consoleUrl(`/callbacks/${data.callback_id}`) }],
    }),
  },
  'callback.gave_up': {
    severity: 'critical',
    describe: 'a merchant callback ran out of attempts: the merchant was not told',
    render: (data) => ({
      title: `Callback given up: order ${data.trade_id} after ${data.attempts} attempts`,
      lines: [`Merchant order: ${data.order_id}`, `Last error: ${data.error}`],
      links: [{ label: 'Callback', url: consoleUrl(`/callbacks/${data.callback_id}`) }],
    }),
  },
  'notifications.folded': {
    severity: 'info',
    describe: 'events over a channel’s hourly cap, told together',
    render: (data) => ({
      title: `… and ${data.count} more ${data.event} in the last hour`,
      lines: (data.titles ?? []).slice(0, 10),
      links: [],
    }),
  },
  'notifications.test': {
    severity: 'info',
    describe: 'a test message (console or notifications:test)',
    render: (data) => ({
      title: 'Test notification from the payment gateway',
      lines: [`Sent by ${data.by}`, 'If you can read this, the channel works.'],
      links: [{ label: 'Console', url: consoleUrl('') }],
    }),
  },
}

export function eventDefinition(name: string): EventDefinition {
  const definition = NOTIFICATION_EVENTS[name]
  if (!definition) throw new Error(`unknown notification event "${name}"`)
  return definition
}
