import db from '@adonisjs/lucid/services/db'
import { DateTime } from 'luxon'
import { OrderStatus } from '#models/order'
import chainRegistry from '#chains/chain_registry'
import { Decimal, toDecimalString } from '#support/text/money'
import { OperatorError } from '#support/cli/operator_error'
import { exactSum } from '#services/admin/exact_sum'

/** Periods of the dashboard's figures: calendar days ending today (today included). */
export const PERIODS = { today: 1, week: 7, month: 30 } as const
export type PeriodName = keyof typeof PERIODS
/** Days of the daily chart. */
export const SERIES_DAYS = 14
/** Orders in the "recent orders" table. */
export const RECENT_ORDERS = 10

const MONTH_DAYS = PERIODS.month
const DAY_MS = 86_400_000

export type StatusCounts = {
  waiting: number
  paid: number
  expired: number
  selecting: number
  total: number
}
export type TokenAmount = { token: string; amount: string }

export type PeriodFigures = {
  /** First instant of the period (start of its first day in the time zone). */
  since: number
  days: number
  /** Merchant orders created in the period, by their status now. */
  orders: StatusCounts
  /** Paid ÷ created (0…1); null when nothing was created. */
  conversion: number | null
  /** Crypto received for the paid orders of the period, per token (all networks). */
  volumeByToken: TokenAmount[]
  /** The same per network, each with its tokens. */
  volumeByNetwork: { network: string; tokens: TokenAmount[] }[]
  /** What the paid orders were worth in the merchants' currencies. */
  fiatByCurrency: { currency: string; amount: string }[]
  /** Callback delivery attempts made in the period and how many the merchants acknowledged. */
  callbacks: { attempts: number; acknowledged: number; successRate: number | null }
}

export type DayPoint = { date: string; start: number; created: number; paid: number }

export type ScannerState =
  'ok' | 'behind' | 'error' | 'stale' | 'never' | 'idle' | 'disabled' | 'unavailable'

export type ScannerStatus = {
  network: string
  displayName: string
  family: string
  enabled: boolean
  /** A loaded plugin can scan this family. */
  scannable: boolean
  wallets: number
  tokens: number
  confirmations: number
  scanIntervalSeconds: number
  blockTimeMs: number
  lastScanAt: number | null
  lastError: string
  caughtUp: boolean
  /** A process holds the scan lease right now. */
  scanning: boolean
  /** As the last scan that knew them reported (null: the family does not tell, or no scan yet). */
  headHeight: string | null
  scannedHeight: string | null
  heightsAt: number | null
  /** head − scanned, in blocks (null: unknown). */
  lagBlocks: string | null
  /** The lag in time at the chain's block time (≈). */
  lagMs: number | null
  /** The lag beyond the confirmations the chain waits for is large, or the scan is behind. */
  lagLarge: boolean
  state: ScannerState
}

export type RecentOrder = {
  tradeId: string
  orderId: string
  pid: string
  status: number
  amount: string
  currency: string
  actualAmount: string
  token: string
  network: string
  createdAt: number
  paidAt: number | null
  callbackStatus: string
}

export type DashboardFigures = {
  generatedAt: number
  timeZone: string
  periods: Record<PeriodName, PeriodFigures>
  /** One point per day, oldest first, today last. */
  series: DayPoint[]
  /** The callback outbox now. */
  outbox: { pending: number; retrying: number; failed: number }
  unmatched: { waiting: number; newestAt: number | null }
  scanners: ScannerStatus[]
  recentOrders: RecentOrder[]
  /** No order at all yet: an installation still being set up. */
  empty: boolean
}

export type DashboardOptions = { now?: number; timeZone?: string }

type OrderGroup = {
  day: number
  status: number
  network: string
  token: string
  currency: string
  count: number
  volume: string
  fiat: string
}

const STATUS_NAMES: Record<number, keyof Omit<StatusCounts, 'total'>> = {
  [OrderStatus.WAITING]: 'waiting',
  [OrderStatus.PAID]: 'paid',
  [OrderStatus.EXPIRED]: 'expired',
  [OrderStatus.SELECTING]: 'selecting',
}

const emptyCounts = (): StatusCounts => ({
  waiting: 0,
  paid: 0,
  expired: 0,
  selecting: 0,
  total: 0,
})
const numberOf = (value: unknown) => (value === null || value === undefined ? 0 : Number(value))
const epochOrNull = (value: unknown) =>
  value === null || value === undefined || Number(value) === 0 ? null : Number(value)

/**
 * The console's home: what happened (orders by status, volume, conversion,
 * callbacks) over today, 7 and 30 days, how the scanners and the outbox
 * are doing now, and the latest orders.
 *
 * Orders are counted as the merchants know them: parent orders (a payer's
 * switch to another network makes a child, whose payment the parent takes
 * on), by creation time; a period's paid orders are those it created that
 * are paid now, so conversion is paid ÷ created of the same orders.
 *
 * Seven small queries, whatever the number of orders: the orders of the
 * last 30 days in one range scan of the orders list's (created_at, id)
 * index (migration 1763700000040_console_order_indexes), grouped by day,
 * status, network, token and currency (the periods and the chart are sums
 * of its days); callback attempts by (started_at); the outbox by
 * (status, next_attempt_at) (two counts); unmatched payments; the chains with their
 * cursors; the ten newest orders. Money is summed exactly (exact_sum.ts).
 * Nothing asks a node: the heights are what the last scan stored.
 */
export class DashboardStats {
  async read(options: DashboardOptions = {}): Promise<DashboardFigures> {
    const now = options.now ?? Date.now()
    const timeZone = options.timeZone ?? 'UTC'
    const days = dayStarts(now, timeZone)

    const [groups, attempts, outbox, unmatched, scanners, recentOrders] = await Promise.all([
      this.#orderGroups(days),
      this.#callbackAttempts(days),
      this.#outbox(),
      this.#unmatched(),
      this.#scanners(now),
      this.#recentOrders(),
    ])

    const periods = {} as Record<PeriodName, PeriodFigures>
    for (const [name, length] of Object.entries(PERIODS) as [PeriodName, number][]) {
      const first = MONTH_DAYS - length
      periods[name] = periodFigures(
        days[first],
        length,
        groups.filter((group) => group.day >= first),
        attempts.filter((row) => row.day >= first)
      )
    }

    const series: DayPoint[] = []
    for (let day = MONTH_DAYS - SERIES_DAYS; day < MONTH_DAYS; day++) {
      const ofDay = groups.filter((group) => group.day === day)
      series.push({
        date: DateTime.fromMillis(days[day], { zone: timeZone }).toISODate()!,
        start: days[day],
        created: ofDay.reduce((sum, group) => sum + group.count, 0),
        paid: ofDay
          .filter((group) => group.status === OrderStatus.PAID)
          .reduce((sum, group) => sum + group.count, 0),
      })
    }

    return {
      generatedAt: now,
      timeZone,
      periods,
      series,
      outbox,
      unmatched,
      scanners,
      recentOrders,
      empty: recentOrders.length === 0,
    }
  }

  /** Parent orders of the last 30 days, one row per day × status × network × token × currency. */
  async #orderGroups(days: number[]): Promise<OrderGroup[]> {
    const client = db.connection()
    const volume = exactSum(client, 'actual_amount', 8, 'volume')
    const fiat = exactSum(client, 'amount', 4, 'fiat')
    let day: string
    let bindings: number[]
    if (days.every((start, index) => index === 0 || start - days[index - 1] === DAY_MS)) {
      // Days of equal length (UTC, or no clock change in the window): the
      // day is a division. Truncated explicitly: SQLite binds the start as a
      // REAL, which makes its division a real one.
      day = `CAST((created_at - ?) / ${DAY_MS} AS INTEGER)`
      bindings = [days[0]]
    } else {
      // A clock change makes a day of 23 or 25 h: compare with each day's start, newest first.
      const recentFirst = days
        .map((_, index) => MONTH_DAYS - 1 - index)
        .filter((index) => index > 0)
      day = `CASE ${recentFirst.map((index) => `WHEN created_at >= ? THEN ${index}`).join(' ')} ELSE 0 END`
      bindings = recentFirst.map((index) => days[index])
    }
    const rows = await client.rawQuery(
      `SELECT ${day} AS day, status, network, token, currency, COUNT(*) AS orders, ${volume.sql}, ${fiat.sql}
         FROM orders
        WHERE created_at >= ? AND parent_id IS NULL
        GROUP BY day, status, network, token, currency`,
      [...bindings, days[0]]
    )
    return resultRows(rows).map((row) => ({
      // A clock set back may date an order after now: it counts as today.
      day: Math.min(Number(row.day), MONTH_DAYS - 1),
      status: Number(row.status),
      network: String(row.network),
      token: String(row.token),
      currency: String(row.currency),
      count: Number(row.orders),
      volume: volume.read(row),
      fiat: fiat.read(row),
    }))
  }

  /** Delivery attempts of the last 30 days per day (those days only: started_at is indexed). */
  async #callbackAttempts(
    days: number[]
  ): Promise<{ day: number; attempts: number; acknowledged: number }[]> {
    // Only the period starts matter here (today, 7 and 30 days back).
    const starts = (Object.values(PERIODS) as number[])
      .map((length) => MONTH_DAYS - length)
      .sort((a, b) => b - a)
    const bucket = `CASE ${starts.map((day) => `WHEN started_at >= ? THEN ${day}`).join(' ')} ELSE 0 END`
    const bindings = starts.map((day) => days[day])
    const rows = await db.connection().rawQuery(
      `SELECT ${bucket} AS day, COUNT(*) AS attempts, SUM(CASE WHEN acknowledged THEN 1 ELSE 0 END) AS acknowledged
         FROM callback_attempts
        WHERE started_at >= ?
        GROUP BY day`,
      [...bindings, days[0]]
    )
    return resultRows(rows).map((row) => ({
      day: Number(row.day),
      attempts: Number(row.attempts),
      acknowledged: numberOf(row.acknowledged),
    }))
  }

  /**
   * Callbacks still to deliver (retrying: tried at least once) and those
   * given up. Counted from the (status, next_attempt_at) index alone; only
   * the pending rows (few) are read for their attempts.
   */
  async #outbox() {
    const [rows, [retrying]] = await Promise.all([
      db
        .from('callbacks')
        .whereIn('status', ['pending', 'failed'])
        .groupBy('status')
        .select('status')
        .count('* as total'),
      db.from('callbacks').where('status', 'pending').where('attempts', '>', 0).count('* as total'),
    ])
    return {
      pending: numberOf(rows.find((row) => row.status === 'pending')?.total),
      retrying: numberOf(retrying?.total),
      failed: numberOf(rows.find((row) => row.status === 'failed')?.total),
    }
  }

  /** Waiting for an operator: neither assigned to an order nor dismissed (the unmatched page's "open"). */
  async #unmatched() {
    const [row] = await db
      .from('unmatched_payments')
      .whereNull('assigned_at')
      .whereNull('dismissed_at')
      .count('* as total')
      .max('detected_at as newest')
    return { waiting: numberOf(row?.total), newestAt: epochOrNull(row?.newest) }
  }

  async #scanners(now: number): Promise<ScannerStatus[]> {
    const rows = await db
      .from('chains')
      .leftJoin('chain_cursors', 'chain_cursors.network', 'chains.network')
      .select(
        'chains.network',
        'chains.display_name',
        'chains.family',
        'chains.enabled',
        'chains.confirmations',
        'chains.scan_interval_seconds',
        'chains.block_time_ms',
        'chain_cursors.last_scan_at',
        'chain_cursors.last_error',
        'chain_cursors.caught_up',
        'chain_cursors.locked_until',
        'chain_cursors.head_height',
        'chain_cursors.scanned_height',
        'chain_cursors.heights_at'
      )
      .select(
        db.raw(
          '(SELECT COUNT(*) FROM wallets WHERE wallets.network = chains.network AND wallets.enabled = ?) AS wallet_count',
          [true]
        ),
        db.raw(
          '(SELECT COUNT(*) FROM tokens WHERE tokens.network = chains.network AND tokens.enabled = ?) AS token_count',
          [true]
        )
      )
      .orderBy('chains.sort_order')
      .orderBy('chains.network')
    return rows.map((row) => scannerStatus(row, now))
  }

  async #recentOrders(): Promise<RecentOrder[]> {
    const rows = await db
      .from('orders')
      .whereNull('parent_id')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .limit(RECENT_ORDERS)
      .select(
        'trade_id',
        'order_id',
        'pid',
        'status',
        'amount',
        'currency',
        'actual_amount',
        'token',
        'network',
        'created_at',
        'paid_at',
        'callback_status'
      )
    return rows.map((row) => ({
      tradeId: row.trade_id,
      orderId: row.order_id,
      pid: row.pid,
      status: Number(row.status),
      amount: toDecimalString(row.amount),
      currency: row.currency,
      actualAmount: toDecimalString(row.actual_amount),
      token: row.token,
      network: row.network,
      createdAt: Number(row.created_at),
      paidAt: epochOrNull(row.paid_at),
      callbackStatus: row.callback_status,
    }))
  }
}

/**
 * Start of each of the last 30 days in `timeZone`, oldest first (index 29
 * is today). Calendar days, so a day across a DST change is 23 or 25 h.
 */
export function dayStarts(now: number, timeZone: string): number[] {
  const today = DateTime.fromMillis(now, { zone: timeZone })
  if (!today.isValid)
    throw new OperatorError(`unknown time zone "${timeZone}"`, {
      key: 'unknown_time_zone',
      args: { timeZone },
    })
  const midnight = today.startOf('day')
  return Array.from({ length: MONTH_DAYS }, (_, index) =>
    midnight.minus({ days: MONTH_DAYS - 1 - index }).toMillis()
  )
}

function periodFigures(
  since: number,
  days: number,
  groups: OrderGroup[],
  attempts: { attempts: number; acknowledged: number }[]
): PeriodFigures {
  const orders = emptyCounts()
  const byToken = new Map<string, Decimal>()
  const byNetwork = new Map<string, Map<string, Decimal>>()
  const byCurrency = new Map<string, Decimal>()
  for (const group of groups) {
    const name = STATUS_NAMES[group.status]
    if (name) orders[name] += group.count
    orders.total += group.count
    if (group.status !== OrderStatus.PAID) continue
    add(byToken, group.token, group.volume)
    if (!byNetwork.has(group.network)) byNetwork.set(group.network, new Map())
    add(byNetwork.get(group.network)!, group.token, group.volume)
    add(byCurrency, group.currency, group.fiat)
  }
  const tried = attempts.reduce((sum, row) => sum + row.attempts, 0)
  const acknowledged = attempts.reduce((sum, row) => sum + row.acknowledged, 0)
  return {
    since,
    days,
    orders,
    conversion: orders.total === 0 ? null : orders.paid / orders.total,
    volumeByToken: amounts(byToken).map(([token, amount]) => ({ token, amount })),
    volumeByNetwork: [...byNetwork.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([network, tokens]) => ({
        network,
        tokens: amounts(tokens).map(([token, amount]) => ({ token, amount })),
      })),
    fiatByCurrency: amounts(byCurrency).map(([currency, amount]) => ({ currency, amount })),
    callbacks: {
      attempts: tried,
      acknowledged,
      successRate: tried === 0 ? null : acknowledged / tried,
    },
  }
}

function add(totals: Map<string, Decimal>, key: string, amount: string) {
  totals.set(key, (totals.get(key) ?? new Decimal(0)).plus(amount))
}

function amounts(totals: Map<string, Decimal>): [string, string][] {
  return [...totals.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => [key, toDecimalString(value)])
}

/** The rows of a raw SELECT on either engine (pg: { rows }, better-sqlite3: the array). */
function resultRows(result: unknown): Record<string, unknown>[] {
  if (Array.isArray(result)) return result
  return (result as { rows: Record<string, unknown>[] }).rows
}

/** A lag is large beyond this (or three scan intervals, if longer), the confirmations' wait aside. */
const LARGE_LAG_MS = 60_000
/** No scan for this many intervals (and at least STALE_MIN_MS): the scheduler is not running it. */
const STALE_INTERVALS = 3
const STALE_MIN_MS = 120_000

function scannerStatus(row: Record<string, any>, now: number): ScannerStatus {
  const family = chainRegistry.find(row.family)
  const intervalMs = Number(row.scan_interval_seconds) * 1000
  const blockTimeMs = Number(row.block_time_ms)
  const confirmations = Number(row.confirmations)
  const lastScanAt = epochOrNull(row.last_scan_at)
  const head = row.head_height ?? null
  const scanned = row.scanned_height ?? null

  let lagBlocks: bigint | null = null
  if (head !== null && scanned !== null) {
    const difference = BigInt(head) - BigInt(scanned)
    lagBlocks = difference > 0n ? difference : 0n
  }
  const lagMs = lagBlocks === null ? null : Number(lagBlocks) * blockTimeMs
  // The scan waits for `confirmations` blocks on purpose; only what is beyond is lag.
  const waitBlocks = BigInt(Math.max(confirmations - 1, 0))
  const excessMs =
    lagBlocks === null || lagBlocks <= waitBlocks ? 0 : Number(lagBlocks - waitBlocks) * blockTimeMs
  const caughtUp =
    row.caught_up === null || row.caught_up === undefined ? true : Boolean(row.caught_up)
  const lagLarge = !caughtUp || excessMs > Math.max(LARGE_LAG_MS, STALE_INTERVALS * intervalMs)

  const status: ScannerStatus = {
    network: row.network,
    displayName: row.display_name,
    family: row.family,
    enabled: Boolean(row.enabled),
    scannable: Boolean(family?.scan),
    wallets: numberOf(row.wallet_count),
    tokens: numberOf(row.token_count),
    confirmations,
    scanIntervalSeconds: Number(row.scan_interval_seconds),
    blockTimeMs,
    lastScanAt,
    lastError: row.last_error ?? '',
    caughtUp,
    scanning:
      row.locked_until !== null && row.locked_until !== undefined && Number(row.locked_until) > now,
    headHeight: head,
    scannedHeight: scanned,
    heightsAt: epochOrNull(row.heights_at),
    lagBlocks: lagBlocks === null ? null : lagBlocks.toString(),
    lagMs,
    lagLarge,
    state: 'ok',
  }
  status.state = scannerState(status, now, intervalMs)
  return status
}

function scannerState(status: ScannerStatus, now: number, intervalMs: number): ScannerState {
  if (!status.enabled) return 'disabled'
  if (!status.scannable) return 'unavailable'
  if (status.wallets === 0 || status.tokens === 0) return 'idle'
  if (status.lastScanAt === null) return 'never'
  if (status.lastError !== '') return 'error'
  if (now - status.lastScanAt > Math.max(STALE_MIN_MS, STALE_INTERVALS * intervalMs)) return 'stale'
  if (status.lagLarge) return 'behind'
  return 'ok'
}

const dashboardStats = new DashboardStats()
export default dashboardStats
