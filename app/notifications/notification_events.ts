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
export function absoluteAdminUrl(path: string): string {
  return `${env.get('APP_URL', 'http://localhost:3333').replace(/\/+$/, '')}/admin${path}`
}

const orderLink = (data: Data): NotificationLink[] =>
  data.trade_id
    ? [{ label: 'Order', url: absoluteAdminUrl(`/orders/${encodeURIComponent(data.trade_id)}`) }]
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
      links: [{ label: 'Unmatched payments', url: absoluteAdminUrl('/unmatched') }],
    }),
  },
  'callback.failing': {
    severity: 'warning',
    describe: 'a merchant callback failed N attempts in a row (notify.callback_failing_after)',
    render: (data) => ({
      title: `Callback failing: order ${data.trade_id}, ${data.attempts} attempts`,
      lines: [`Merchant order: ${data.order_id}`, `Last error: ${data.error}`],
      links: [{ label: 'Callback', url: absoluteAdminUrl(`/callbacks/${data.callback_id}`) }],
    }),
  },
  'callback.gave_up': {
    severity: 'critical',
    describe: 'a merchant callback ran out of attempts: the merchant was not told',
    render: (data) => ({
      title: `Callback given up: order ${data.trade_id} after ${data.attempts} attempts`,
      lines: [`Merchant order: ${data.order_id}`, `Last error: ${data.error}`],
      links: [{ label: 'Callback', url: absoluteAdminUrl(`/callbacks/${data.callback_id}`) }],
    }),
  },
  'reorg.credited_order': {
    severity: 'critical',
    describe: 'a reorganisation replaced the block of a paid order’s payment',
    render: (data) => ({
      title: `Reorganisation: paid order ${data.trade_id} lost its payment’s block on ${data.network}`,
      lines: [
        `Transaction: ${data.reference}`,
        `Block: ${data.block}`,
        'Check whether the payment is in the new chain before delivering the goods.',
      ],
      links: [
        ...orderLink(data),
        { label: 'Unmatched payments', url: absoluteAdminUrl('/unmatched') },
      ],
    }),
  },
  'scanner.stalled': {
    severity: 'critical',
    describe: 'a chain that takes payments has not been scanned for notify.scanner_stalled_minutes',
    render: (data) => ({
      title:
        data.last_scan_at === null
          ? `Scanner stalled: ${data.network} has never been scanned`
          : data.interrupted_minutes
            ? `Scanner stalled: ${data.network}, every run interrupted for ${data.interrupted_minutes} minutes`
            : `Scanner stalled: ${data.network}, no scan for ${data.minutes} minutes`,
      lines: [
        data.last_scan_at ? `Last scan: ${data.last_scan_at}` : '',
        data.last_error ? `Last error: ${data.last_error}` : '',
        data.interrupted ? 'The last run was interrupted (rate limit or outage).' : '',
      ].filter(Boolean),
      links: [{ label: 'Chains', url: absoluteAdminUrl('/chains') }],
    }),
  },
  'scanner.recovered': {
    severity: 'info',
    describe: 'a stalled scanner scans again',
    render: (data) => ({
      title: `Scanner recovered: ${data.network}`,
      lines: [`Last scan: ${data.last_scan_at}`],
      links: [{ label: 'Chains', url: absoluteAdminUrl('/chains') }],
    }),
  },
  'rpc.budget_low': {
    severity: 'warning',
    describe: 'an RPC endpoint used 80 % of its daily request budget',
    render: (data) => ({
      title: `RPC budget low: ${data.endpoint} (${data.network}) used ${data.used} of ${data.per_day} requests today`,
      lines: ['Scanning stops on it at 100 % until 00:00 UTC: add an endpoint or a paid key.'],
      links: [{ label: 'Chains', url: absoluteAdminUrl('/chains') }],
    }),
  },
  'rpc.exhausted': {
    severity: 'critical',
    describe: 'an RPC endpoint’s daily request budget or credits are spent',
    render: (data) => ({
      title: `RPC budget spent: ${data.endpoint} (${data.network}) until 00:00 UTC`,
      lines: [
        data.detail ? `${data.detail}` : '',
        'The pool moves to the next endpoint, if any.',
      ].filter(Boolean),
      links: [{ label: 'Chains', url: absoluteAdminUrl('/chains') }],
    }),
  },
  'rate.stale': {
    severity: 'critical',
    describe: 'no usable exchange rate for a currency payers use: orders in it are refused',
    render: (data) => ({
      title: `No usable rate: ${data.finding}`,
      lines: data.fix ? [`Fix: ${data.fix}`] : [],
      links: [{ label: 'Settings', url: absoluteAdminUrl('/settings') }],
    }),
  },
  'admin.sign_in': {
    severity: 'warning',
    describe: 'a console account signed in from an IP address it never signed in from',
    render: (data) => ({
      title: `Console sign-in from a new IP: ${data.email} from ${data.ip}`,
      lines: [`Role: ${data.role}`, `Method: ${data.method}`],
      links: [{ label: 'Audit log', url: absoluteAdminUrl('/audit') }],
    }),
  },
  'daily.report': {
    severity: 'info',
    describe: 'the day before in figures, at notify.daily_report_hour',
    render: (data) => ({
      title: `Daily report ${data.day}: ${data.orders_paid} of ${data.orders_created} orders paid`,
      lines: [
        `Conversion: ${data.conversion_percent === null ? '-' : `${data.conversion_percent} %`}`,
        ...Object.entries(data.paid_volume ?? {}).map(([key, sum]) => `Paid: ${sum} ${key}`),
        `Callbacks: ${
          Object.entries(data.callbacks ?? {})
            .map(([status, count]) => `${count} ${status}`)
            .join(', ') || 'none'
        }`,
        `Unmatched payments: ${data.unmatched_payments}`,
      ],
      links: [{ label: 'Dashboard', url: absoluteAdminUrl('') }],
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
      links: [{ label: 'Console', url: absoluteAdminUrl('') }],
    }),
  },
}

export function eventDefinition(name: string): EventDefinition {
  const definition = NOTIFICATION_EVENTS[name]
  if (!definition) throw new Error(`unknown notification event "${name}"`)
  return definition
}
