import type {
  DashboardFigures,
  PeriodName,
  ScannerState,
  ScannerStatus,
} from '#services/console/dashboard_stats'
import { chartTable, renderChart, type ChartInput } from '#services/console/svg_chart'
import {
  duration,
  groupedCount,
  groupedDecimal,
  percent,
  relativeTime,
  utcTime,
} from '#services/console/console_format'
import { adminUrl } from '#console/console_paths'

/**
 * The dashboard's figures as the page shows them: words, tones and links.
 * Kept apart from the queries (dashboard_stats.ts) so that the page's
 * template only lays things out.
 */

type Tone = 'success' | 'warning' | 'danger' | 'info' | 'neutral'

const PERIOD_COLUMNS: { key: PeriodName; label: string }[] = [
  { key: 'today', label: 'Today' },
  { key: 'week', label: '7 days' },
  { key: 'month', label: '30 days' },
]

export const ORDER_STATUS: Record<number, { label: string; tone: Tone }> = {
  1: { label: 'Waiting', tone: 'info' },
  2: { label: 'Paid', tone: 'success' },
  3: { label: 'Expired', tone: 'neutral' },
  4: { label: 'Choosing network', tone: 'warning' },
}

const CALLBACK_STATUS: Record<string, string> = {
  none: 'not due',
  pending: 'pending',
  delivered: 'delivered',
  failed: 'failed',
}

const SCANNER_STATES: Record<ScannerState, { label: string; tone: Tone }> = {
  ok: { label: 'Up to date', tone: 'success' },
  behind: { label: 'Behind', tone: 'warning' },
  error: { label: 'Error', tone: 'danger' },
  stale: { label: 'Not scanning', tone: 'danger' },
  never: { label: 'Not scanned yet', tone: 'warning' },
  idle: { label: 'Nothing to watch', tone: 'neutral' },
  disabled: { label: 'Disabled', tone: 'neutral' },
  unavailable: { label: 'Plugin not loaded', tone: 'warning' },
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** "2025-06-05" → "5 Jun". */
function dayLabel(date: string): string {
  const [, month, day] = date.split('-').map(Number)
  return `${day} ${MONTHS[month - 1]}`
}

function rateTone(rate: number | null): Tone {
  if (rate === null) return 'neutral'
  if (rate < 0.5) return 'danger'
  if (rate < 0.95) return 'warning'
  return 'success'
}

function scannerHelp(status: ScannerStatus, now: number): string {
  switch (status.state) {
    case 'stale':
      return `No scan for ${relativeTime(status.lastScanAt, now).replace(' ago', '')}: are the background jobs running (RUN_JOBS)?`
    case 'never':
      return 'Waiting for its first scan.'
    case 'idle':
      return status.wallets === 0
        ? 'Add a receiving wallet to watch this chain.'
        : 'Enable a token to watch this chain.'
    case 'unavailable':
      return `No loaded plugin scans the ${status.family} family (PLUGINS).`
    case 'behind':
      return status.caughtUp
        ? 'Far behind the head.'
        : 'Catching up: more blocks to scan right away.'
    default:
      return ''
  }
}

function networkLabel(names: Map<string, string>, network: string): string {
  if (network === 'provider') return 'Hosted provider'
  if (network === '') return '—'
  return names.get(network) ?? network
}

export function dashboardView(figures: DashboardFigures) {
  const { periods, generatedAt: now } = figures
  const names = new Map(figures.scanners.map((status) => [status.network, status.displayName]))
  const byPeriod = <T>(pick: (period: DashboardFigures['periods'][PeriodName]) => T) =>
    PERIOD_COLUMNS.map((column) => pick(periods[column.key]))

  const headline = [
    {
      label: 'Orders today',
      value: groupedCount(periods.today.orders.total),
      hint: `${groupedCount(periods.today.orders.paid)} paid · ${groupedCount(periods.today.orders.waiting)} waiting`,
      tone: 'neutral' as Tone,
      href: adminUrl('/orders'),
    },
    {
      label: 'Conversion, 7 days',
      value: percent(periods.week.conversion),
      hint:
        periods.week.orders.total === 0
          ? 'No order in 7 days'
          : `${groupedCount(periods.week.orders.paid)} of ${groupedCount(periods.week.orders.total)} orders paid`,
      tone: 'neutral' as Tone,
      href: null,
    },
    {
      label: 'Callback success, 7 days',
      value: percent(periods.week.callbacks.successRate),
      hint:
        periods.week.callbacks.attempts === 0
          ? 'No delivery attempt in 7 days'
          : `${groupedCount(periods.week.callbacks.acknowledged)} of ${groupedCount(periods.week.callbacks.attempts)} attempts acknowledged`,
      tone: rateTone(periods.week.callbacks.successRate),
      href: null,
    },
    {
      label: 'Callbacks to deliver',
      value: groupedCount(figures.outbox.pending),
      hint: `${groupedCount(figures.outbox.retrying)} retrying · ${groupedCount(figures.outbox.failed)} failed`,
      tone: (figures.outbox.failed > 0
        ? 'danger'
        : figures.outbox.retrying > 0
          ? 'warning'
          : 'neutral') as Tone,
      href: adminUrl('/callbacks'),
    },
    {
      label: 'Unmatched payments',
      value: groupedCount(figures.unmatched.waiting),
      hint:
        figures.unmatched.waiting === 0
          ? 'Nothing to sort out'
          : `Newest ${relativeTime(figures.unmatched.newestAt, now)}`,
      tone: (figures.unmatched.waiting > 0 ? 'warning' : 'neutral') as Tone,
      href: adminUrl('/unmatched'),
    },
  ]

  const statusRows = [
    { label: 'Created', values: byPeriod((period) => groupedCount(period.orders.total)) },
    { label: 'Paid', values: byPeriod((period) => groupedCount(period.orders.paid)) },
    {
      label: 'Waiting for payment',
      values: byPeriod((period) => groupedCount(period.orders.waiting)),
    },
    {
      label: 'Choosing a network',
      values: byPeriod((period) => groupedCount(period.orders.selecting)),
    },
    { label: 'Expired', values: byPeriod((period) => groupedCount(period.orders.expired)) },
    {
      label: 'Conversion (paid ÷ created)',
      values: byPeriod((period) => percent(period.conversion)),
    },
  ]

  const callbackRows = [
    {
      label: 'Delivery attempts',
      values: byPeriod((period) => groupedCount(period.callbacks.attempts)),
    },
    {
      label: 'Acknowledged by the merchant',
      values: byPeriod((period) => groupedCount(period.callbacks.acknowledged)),
    },
    { label: 'Success rate', values: byPeriod((period) => percent(period.callbacks.successRate)) },
  ]

  // Every token / network / currency seen in 30 days, with its amount per period ("0" when none).
  const tokens = periods.month.volumeByToken.map((row) => row.token)
  const volumeRows = tokens.map((token) => ({
    token,
    values: byPeriod((period) =>
      groupedDecimal(period.volumeByToken.find((row) => row.token === token)?.amount ?? '0')
    ),
  }))
  const networkRows = periods.month.volumeByNetwork.flatMap((network) =>
    network.tokens.map((entry) => ({
      network: networkLabel(names, network.network),
      token: entry.token,
      values: byPeriod((period) =>
        groupedDecimal(
          period.volumeByNetwork
            .find((row) => row.network === network.network)
            ?.tokens.find((row) => row.token === entry.token)?.amount ?? '0'
        )
      ),
    }))
  )
  const fiatRows = periods.month.fiatByCurrency.map((row) => ({
    currency: row.currency,
    values: byPeriod((period) =>
      groupedDecimal(
        period.fiatByCurrency.find((entry) => entry.currency === row.currency)?.amount ?? '0'
      )
    ),
  }))

  const chartInput: ChartInput = {
    id: 'orders-per-day',
    kind: 'bar',
    title: `Orders created and paid per day, last ${figures.series.length} days (UTC)`,
    labels: figures.series.map((day) => dayLabel(day.date)),
    series: [
      { name: 'Created', key: 'created', values: figures.series.map((day) => day.created) },
      { name: 'Paid', key: 'paid', values: figures.series.map((day) => day.paid) },
    ],
  }

  const scanners = figures.scanners.map((status) => ({
    network: status.network,
    href: adminUrl(`/chains/${encodeURIComponent(status.network)}`),
    name: status.displayName,
    family: status.family,
    state: SCANNER_STATES[status.state],
    help: scannerHelp(status, now),
    scanning: status.scanning,
    scanned: status.scannedHeight === null ? '—' : groupedDecimal(status.scannedHeight),
    head: status.headHeight === null ? '—' : groupedDecimal(status.headHeight),
    lag:
      status.lagBlocks === null
        ? '—'
        : `${groupedDecimal(status.lagBlocks)} block${status.lagBlocks === '1' ? '' : 's'}${status.lagMs === null ? '' : ` (≈ ${duration(status.lagMs)})`}`,
    lagLarge: status.lagLarge && status.enabled,
    lagNote:
      status.lagBlocks === null
        ? ''
        : `waits for ${status.confirmations} confirmation${status.confirmations === 1 ? '' : 's'}`,
    heightsAt: status.heightsAt === null ? '' : `as of ${relativeTime(status.heightsAt, now)}`,
    lastScan: relativeTime(status.lastScanAt, now),
    lastScanUtc: status.lastScanAt === null ? '' : utcTime(status.lastScanAt),
    lastError: status.lastError,
  }))

  const recentOrders = figures.recentOrders.map((order) => ({
    tradeId: order.tradeId,
    href: adminUrl(`/orders/${encodeURIComponent(order.tradeId)}`),
    merchant: `${order.pid} · ${order.orderId}`,
    fiat: `${groupedDecimal(order.amount)} ${order.currency}`,
    crypto: order.token === '' ? '—' : `${groupedDecimal(order.actualAmount)} ${order.token}`,
    network: networkLabel(names, order.network),
    status: ORDER_STATUS[order.status] ?? {
      label: `status ${order.status}`,
      tone: 'neutral' as Tone,
    },
    created: utcTime(order.createdAt),
    createdAgo: relativeTime(order.createdAt, now),
    callback: CALLBACK_STATUS[order.callbackStatus] ?? order.callbackStatus,
  }))

  return {
    empty: figures.empty,
    generatedAt: utcTime(now),
    periodColumns: PERIOD_COLUMNS,
    headline,
    statusRows,
    callbackRows,
    volumeRows,
    networkRows,
    fiatRows,
    chart: { svg: renderChart(chartInput), table: chartTable(chartInput), title: chartInput.title },
    scanners,
    scannerProblems: figures.scanners.filter((status) =>
      ['error', 'stale', 'behind', 'unavailable'].includes(status.state)
    ).length,
    recentOrders,
  }
}

export type DashboardView = ReturnType<typeof dashboardView>
