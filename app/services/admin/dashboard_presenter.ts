import type {
  DashboardFigures,
  PeriodName,
  ScannerState,
  ScannerStatus,
} from '#services/admin/dashboard_stats'
import { chartTable, renderChart, type ChartInput } from '#services/admin/svg_chart'
import {
  duration,
  groupedCount,
  groupedDecimal,
  percent,
  relativeTime,
  utcTime,
  type FormatI18n,
} from '#services/admin/admin_format'
import { adminUrl } from '#admin/admin_paths'
import providers from '#payments/payment_provider'

/**
 * The dashboard's figures as the page shows them: words, tones and links.
 * Kept apart from the queries (dashboard_stats.ts) so that the page's
 * template only lays things out.
 *
 * `dashboardView` takes the request's i18n (`ctx.i18n`, keys
 * console.dashboard.* and console.format.*) as an optional argument;
 * without it the words are the English below, as they always were.
 */

/** The English below, or its key's text in the admin's language. */
function say(
  i18n: FormatI18n | undefined,
  key: string,
  english: string,
  values?: Record<string, string | number>
): string {
  return i18n ? i18n.t(`admin.dashboard.${key}`, values) : english
}

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

/** "2025-06-05" → "5 Jun" (6月5日). */
function dayLabel(date: string, i18n?: FormatI18n): string {
  const [, month, day] = date.split('-').map(Number)
  if (!i18n) return `${day} ${MONTHS[month - 1]}`
  return say(i18n, 'chart.day_label', '', {
    day: String(day),
    month: i18n.t(`admin.dashboard.chart.month.${month}`),
  })
}

/**
 * The chart's summary (its <desc>) in the admin's words: chartSummary's
 * sentences, for counts (only used with an i18n; chartSummary otherwise).
 */
function chartSummaryIn(input: ChartInput, i18n: FormatI18n): string {
  const t = (key: string, values?: Record<string, string>) =>
    i18n.t(`admin.dashboard.chart.${key}`, values)
  if (input.labels.length === 0) return t('no_data')
  const range =
    input.labels.length === 1
      ? input.labels[0]
      : t('range', { from: input.labels[0], to: input.labels.at(-1)! })
  const parts = input.series.map((series) => {
    const values = series.values.map((value) => (Number.isFinite(value) && value > 0 ? value : 0))
    const total = values.reduce((sum, value) => sum + value, 0)
    if (total === 0) return t('series_none', { name: series.name })
    const peak = Math.max(...values)
    return t('series', {
      name: series.name,
      total: groupedCount(total),
      peak: groupedCount(peak),
      day: input.labels[values.indexOf(peak)],
    })
  })
  return t('summary', { range, series: parts.join(' ') })
}

/** relativeTime without its "ago" ("3 h"; "just now" and "never" as they are). */
function sinceTime(epochMs: number | null, now: number, i18n?: FormatI18n): string {
  if (!i18n) return relativeTime(epochMs, now).replace(' ago', '')
  return relativeTime(epochMs, now, {
    t: (key, data) => (key === 'admin.format.ago' ? String(data?.time) : i18n.t(key, data)),
  })
}

function rateTone(rate: number | null): Tone {
  if (rate === null) return 'neutral'
  if (rate < 0.5) return 'danger'
  if (rate < 0.95) return 'warning'
  return 'success'
}

function scannerHelp(status: ScannerStatus, now: number, i18n?: FormatI18n): string {
  switch (status.state) {
    case 'stale': {
      const time = sinceTime(status.lastScanAt, now, i18n)
      return say(
        i18n,
        'help.stale',
        `No scan for ${time}: are the background jobs running (RUN_JOBS)?`,
        { time }
      )
    }
    case 'never':
      return say(i18n, 'help.never', 'Waiting for its first scan.')
    case 'idle':
      return status.wallets === 0
        ? say(i18n, 'help.no_wallet', 'Add a receiving wallet to watch this chain.')
        : say(i18n, 'help.no_token', 'Enable a token to watch this chain.')
    case 'unavailable':
      return say(
        i18n,
        'help.unavailable',
        `No loaded plugin scans the ${status.family} family (PLUGINS).`,
        { family: status.family }
      )
    case 'behind':
      return status.caughtUp
        ? say(i18n, 'help.far_behind', 'Far behind the head.')
        : say(i18n, 'help.catching_up', 'Catching up: more blocks to scan right away.')
    default:
      return ''
  }
}

function networkLabel(names: Map<string, string>, network: string, i18n?: FormatI18n): string {
  if (providers.has(network)) return say(i18n, 'hosted_provider', 'Hosted provider')
  if (network === '') return '—'
  return names.get(network) ?? network
}

export function dashboardView(figures: DashboardFigures, i18n?: FormatI18n) {
  const { periods, generatedAt: now } = figures
  const names = new Map(figures.scanners.map((status) => [status.network, status.displayName]))
  const byPeriod = <T>(pick: (period: DashboardFigures['periods'][PeriodName]) => T) =>
    PERIOD_COLUMNS.map((column) => pick(periods[column.key]))
  const count = groupedCount
  const ago = (epochMs: number | null) => relativeTime(epochMs, now, i18n)

  const headline = [
    {
      label: say(i18n, 'headline.orders_today', 'Orders today'),
      value: groupedCount(periods.today.orders.total),
      hint: say(
        i18n,
        'headline.orders_today_hint',
        `${count(periods.today.orders.paid)} paid · ${count(periods.today.orders.waiting)} waiting`,
        { paid: count(periods.today.orders.paid), waiting: count(periods.today.orders.waiting) }
      ),
      tone: 'neutral' as Tone,
      href: adminUrl('/orders'),
    },
    {
      label: say(i18n, 'headline.conversion', 'Conversion, 7 days'),
      value: percent(periods.week.conversion),
      hint:
        periods.week.orders.total === 0
          ? say(i18n, 'headline.no_order', 'No order in 7 days')
          : say(
              i18n,
              'headline.conversion_hint',
              `${count(periods.week.orders.paid)} of ${count(periods.week.orders.total)} orders paid`,
              { paid: count(periods.week.orders.paid), total: count(periods.week.orders.total) }
            ),
      tone: 'neutral' as Tone,
      href: null,
    },
    {
      label: say(i18n, 'headline.callbacks', 'Callback success, 7 days'),
      value: percent(periods.week.callbacks.successRate),
      hint:
        periods.week.callbacks.attempts === 0
          ? say(i18n, 'headline.no_attempt', 'No delivery attempt in 7 days')
          : say(
              i18n,
              'headline.callbacks_hint',
              `${count(periods.week.callbacks.acknowledged)} of ${count(periods.week.callbacks.attempts)} attempts acknowledged`,
              {
                acknowledged: count(periods.week.callbacks.acknowledged),
                attempts: count(periods.week.callbacks.attempts),
              }
            ),
      tone: rateTone(periods.week.callbacks.successRate),
      href: null,
    },
    {
      label: say(i18n, 'headline.outbox', 'Callbacks to deliver'),
      value: groupedCount(figures.outbox.pending),
      hint: say(
        i18n,
        'headline.outbox_hint',
        `${count(figures.outbox.retrying)} retrying · ${count(figures.outbox.failed)} failed`,
        { retrying: count(figures.outbox.retrying), failed: count(figures.outbox.failed) }
      ),
      tone: (figures.outbox.failed > 0
        ? 'danger'
        : figures.outbox.retrying > 0
          ? 'warning'
          : 'neutral') as Tone,
      href: adminUrl('/callbacks'),
    },
    {
      label: say(i18n, 'headline.unmatched', 'Unmatched payments'),
      value: groupedCount(figures.unmatched.waiting),
      hint:
        figures.unmatched.waiting === 0
          ? say(i18n, 'headline.unmatched_none', 'Nothing to sort out')
          : say(i18n, 'headline.unmatched_hint', `Newest ${ago(figures.unmatched.newestAt)}`, {
              ago: ago(figures.unmatched.newestAt),
            }),
      tone: (figures.unmatched.waiting > 0 ? 'warning' : 'neutral') as Tone,
      href: adminUrl('/unmatched'),
    },
  ]

  /** A row of the period table: its label (catalogue `rows.<key>`) and one value per period. */
  const periodRow = (
    key: string,
    english: string,
    value: (period: DashboardFigures['periods'][PeriodName]) => string
  ) => ({ label: say(i18n, `rows.${key}`, english), values: byPeriod(value) })

  const statusRows = [
    periodRow('created', 'Created', (p) => groupedCount(p.orders.total)),
    periodRow('paid', 'Paid', (p) => groupedCount(p.orders.paid)),
    periodRow('waiting', 'Waiting for payment', (p) => groupedCount(p.orders.waiting)),
    periodRow('selecting', 'Choosing a network', (p) => groupedCount(p.orders.selecting)),
    periodRow('expired', 'Expired', (p) => groupedCount(p.orders.expired)),
    periodRow('conversion', 'Conversion (paid ÷ created)', (p) => percent(p.conversion)),
  ]

  const callbackRows = [
    periodRow('attempts', 'Delivery attempts', (p) => groupedCount(p.callbacks.attempts)),
    periodRow('acknowledged', 'Acknowledged by the merchant', (p) =>
      groupedCount(p.callbacks.acknowledged)
    ),
    periodRow('success_rate', 'Success rate', (p) => percent(p.callbacks.successRate)),
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
      network: networkLabel(names, network.network, i18n),
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
    title: say(
      i18n,
      'chart.name',
      `Orders created and paid per day, last ${figures.series.length} days (UTC)`,
      { days: String(figures.series.length) }
    ),
    labels: figures.series.map((day) => dayLabel(day.date, i18n)),
    series: [
      {
        name: say(i18n, 'chart.created', 'Created'),
        key: 'created',
        values: figures.series.map((day) => day.created),
      },
      {
        name: say(i18n, 'chart.paid', 'Paid'),
        key: 'paid',
        values: figures.series.map((day) => day.paid),
      },
    ],
  }
  if (i18n) {
    chartInput.description = chartSummaryIn(chartInput, i18n)
    chartInput.labelHeading = say(i18n, 'chart.day', 'Day')
  }

  const scanners = figures.scanners.map((status) => ({
    network: status.network,
    href: adminUrl(`/chains/${encodeURIComponent(status.network)}`),
    name: status.displayName,
    family: status.family,
    state: {
      tone: SCANNER_STATES[status.state].tone,
      label: say(i18n, `state.${status.state}`, SCANNER_STATES[status.state].label),
    },
    help: scannerHelp(status, now, i18n),
    scanning: status.scanning,
    scanned: status.scannedHeight === null ? '—' : groupedDecimal(status.scannedHeight),
    head: status.headHeight === null ? '—' : groupedDecimal(status.headHeight),
    lag: status.lagBlocks === null ? '—' : lagText(status.lagBlocks, status.lagMs, i18n),
    lagLarge: status.lagLarge && status.enabled,
    lagNote:
      status.lagBlocks === null
        ? ''
        : say(
            i18n,
            'scanners.confirmations',
            `waits for ${status.confirmations} confirmation${status.confirmations === 1 ? '' : 's'}`,
            { count: status.confirmations }
          ),
    heightsAt:
      status.heightsAt === null
        ? ''
        : say(i18n, 'scanners.as_of', `as of ${ago(status.heightsAt)}`, {
            ago: ago(status.heightsAt),
          }),
    lastScan: ago(status.lastScanAt),
    lastScanUtc: status.lastScanAt === null ? '' : utcTime(status.lastScanAt, i18n),
    lastError: status.lastError,
  }))

  const recentOrders = figures.recentOrders.map((order) => ({
    tradeId: order.tradeId,
    href: adminUrl(`/orders/${encodeURIComponent(order.tradeId)}`),
    merchant: `${order.pid} · ${order.orderId}`,
    fiat: `${groupedDecimal(order.amount)} ${order.currency}`,
    crypto: order.token === '' ? '—' : `${groupedDecimal(order.actualAmount)} ${order.token}`,
    network: networkLabel(names, order.network, i18n),
    status: ORDER_STATUS[order.status]
      ? {
          label: say(i18n, `status.${order.status}`, ORDER_STATUS[order.status].label),
          tone: ORDER_STATUS[order.status].tone,
        }
      : {
          label: say(i18n, 'status.other', `status ${order.status}`, {
            status: String(order.status),
          }),
          tone: 'neutral' as Tone,
        },
    created: utcTime(order.createdAt, i18n),
    createdAgo: ago(order.createdAt),
    callback: Object.hasOwn(CALLBACK_STATUS, order.callbackStatus)
      ? say(i18n, `callback.${order.callbackStatus}`, CALLBACK_STATUS[order.callbackStatus])
      : order.callbackStatus,
  }))

  return {
    empty: figures.empty,
    generatedAt: utcTime(now, i18n),
    periodColumns: PERIOD_COLUMNS.map((column) => ({
      key: column.key,
      label: say(i18n, `period.${column.key}`, column.label),
    })),
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

/** "12 blocks (≈ 2 min)". */
function lagText(blocks: string, lagMs: number | null, i18n?: FormatI18n): string {
  const english = `${groupedDecimal(blocks)} block${blocks === '1' ? '' : 's'}`
  const lag = say(i18n, 'scanners.blocks', english, {
    count: Number(blocks),
    blocks: groupedDecimal(blocks),
  })
  if (lagMs === null) return lag
  const time = duration(lagMs, i18n)
  return say(i18n, 'scanners.lag_time', `${lag} (≈ ${time})`, { lag, time })
}

export type DashboardView = ReturnType<typeof dashboardView>
