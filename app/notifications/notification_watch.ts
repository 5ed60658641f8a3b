import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import BigNumber from 'bignumber.js'
import settings from '#settings/settings_service'
import { raiseNotification } from '#notifications/notifier'
import { toDecimalString } from '#support/text/money'
import { onRpcBudgetAlert, type RpcBudgetAlert } from '#chains/rpc_pool'

/** Events (and their deliveries) are kept this long once every delivery is over. */
export const NOTIFICATION_RETENTION_DAYS = 30

/** Rates are asked of their source at most this often (the check calls it). */
const RATE_CHECK_MS = 10 * 60_000

/** Year, month (1–12), day and hour of `at` in `timeZone`. */
export function zonedParts(at: number, timeZone: string) {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-GB', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(at)
      .map((part) => [part.type, part.value])
  )
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
  }
}

/** Epoch ms of 00:00 of that calendar day in `timeZone`. */
export function zonedMidnight(year: number, month: number, day: number, timeZone: string): number {
  const utc = Date.UTC(year, month - 1, day)
  // The zone's offset at that moment, then once more at the corrected moment (a DST change).
  let guess = utc
  for (let round = 0; round < 2; round++) {
    const seen = zonedParts(guess, timeZone)
    const minutes = Number(
      new Intl.DateTimeFormat('en-GB', { timeZone, minute: '2-digit' }).format(guess)
    )
    const local = Date.UTC(seen.year, seen.month - 1, seen.day, seen.hour, minutes)
    guess = utc - (local - guess)
  }
  return guess
}

const isoDay = (year: number, month: number, day: number) =>
  `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`

/** What the daily report says about [from, to). */
export async function dailyFigures(from: number, to: number) {
  const created = await db
    .from('orders')
    .whereNull('parent_id')
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .count('* as count')
  const paidRows: {
    token: string
    network: string
    pay_provider: string
    actual_amount: string
  }[] = await db
    .from('orders')
    .whereNull('parent_id')
    .where('status', 2)
    .where('paid_at', '>=', from)
    .where('paid_at', '<', to)
    .select('token', 'network', 'pay_provider', 'actual_amount')
  const volume = new Map<string, BigNumber>()
  for (const row of paidRows) {
    const key = `${String(row.token).toUpperCase()} on ${row.pay_provider || row.network}`
    volume.set(key, (volume.get(key) ?? new BigNumber(0)).plus(row.actual_amount))
  }
  const callbacks: { status: string; count: number | string }[] = await db
    .from('callbacks')
    .where('updated_at', '>=', from)
    .where('updated_at', '<', to)
    .groupBy('status')
    .select('status')
    .count('* as count')
  const unmatched = await db
    .from('unmatched_payments')
    .where('detected_at', '>=', from)
    .where('detected_at', '<', to)
    .count('* as count')
  const createdCount = Number(created[0].count)
  return {
    orders_created: createdCount,
    orders_paid: paidRows.length,
    conversion_percent:
      createdCount === 0 ? null : Math.round((paidRows.length / createdCount) * 1000) / 10,
    paid_volume: Object.fromEntries(
      [...volume].sort().map(([key, sum]) => [key, toDecimalString(sum)])
    ),
    callbacks: Object.fromEntries(callbacks.map((row) => [row.status, Number(row.count)])),
    unmatched_payments: Number(unmatched[0].count),
  }
}

/**
 * The events nobody's action raises, looked for by the workers each
 * minute: a scanner without progress (scanner.stalled, then
 * scanner.recovered), no usable rate for a pair payers use (rate.stale)
 * and the day's report (daily.report, at notify.daily_report_hour in
 * notify.time_zone). Each is raised once per occurrence (a dedupe key:
 * several workers, or one checking every minute, raise it once).
 */
export class NotificationWatch {
  #lastRateCheck = 0
  #staleRates = new Set<string>()
  /** Since when each chain's runs have all been interrupted (as this process saw them). */
  #interruptedSince = new Map<string, number>()

  async runOnce(now = Date.now()) {
    await this.prune(now)
    await this.#scanners(now)
    if (now - this.#lastRateCheck >= RATE_CHECK_MS) {
      this.#lastRateCheck = now
      await this.#rates(now)
    }
    await this.#dailyReport(now)
  }

  /**
   * Forgets events older than NOTIFICATION_RETENTION_DAYS whose deliveries
   * are all over (delivered, failed, folded and told), with those
   * deliveries: the outbox keeps a month of history, not every order ever
   * paid. Dedupe keys go with them; none of them is raised again that late.
   */
  async prune(now = Date.now()): Promise<number> {
    const before = now - NOTIFICATION_RETENTION_DAYS * 86_400_000
    const done = db
      .from('notification_events as e')
      .where('e.created_at', '<', before)
      .where('e.fanned_out', true)
      .whereNotExists((open) =>
        open
          .from('notification_deliveries as d')
          .whereColumn('d.event_id', 'e.id')
          .where((state) =>
            state
              .where('d.status', 'pending')
              .orWhere((folded) => folded.where('d.status', 'folded').where('d.summarized', false))
          )
      )
      .select('e.id')
      .limit(1000)
    const rows: { id: number | string }[] = await done
    const ids = rows.map((row) => Number(row.id))
    if (ids.length === 0) return 0
    await db.transaction(async (trx) => {
      await trx.from('notification_deliveries').whereIn('event_id', ids).delete()
      await trx.from('notification_events').whereIn('id', ids).delete()
    })
    return ids.length
  }

  async #scanners(now: number) {
    const { ChainOverview } = await import('#services/operators/chain_overview')
    const stalledAfterMs = (await settings.get('notify.scanner_stalled_minutes')) * 60_000
    const summaries = await new ChainOverview().all()
    const chains = summaries.filter(
      (chain) =>
        chain.enabled &&
        chain.familyLoaded &&
        chain.rpcUrls.length > 0 &&
        chain.wallets.enabled > 0 &&
        chain.tokens.some((token) => token.enabled)
    )
    for (const chain of chains) {
      const last = chain.scan.lastScanAt
      const latest = await db
        .from('notification_events')
        .whereIn('name', ['scanner.stalled', 'scanner.recovered'])
        .where('dedupe_key', 'like', `scanner.%:${chain.network}:%`)
        .orderBy('id', 'desc')
        .select('id', 'name')
        .first()
      // Interrupted runs (a rate limit, an outage midway) keep their progress and their
      // time: a chain interrupted at every run for as long is stalled too.
      if (!chain.scan.interrupted) this.#interruptedSince.delete(chain.network)
      else if (!this.#interruptedSince.has(chain.network))
        this.#interruptedSince.set(chain.network, now)
      const interruptedSince = this.#interruptedSince.get(chain.network)
      const interruptedTooLong =
        interruptedSince !== undefined && now - interruptedSince >= stalledAfterMs
      const stalled = last === null || now - last > stalledAfterMs || interruptedTooLong
      if (stalled && latest?.name !== 'scanner.stalled') {
        await raiseNotification(
          'scanner.stalled',
          {
            network: chain.network,
            last_scan_at: last === null ? null : new Date(last).toISOString(),
            minutes: last === null ? null : Math.floor((now - last) / 60_000),
            last_error: chain.scan.lastError,
            interrupted: chain.scan.interrupted,
            interrupted_minutes: interruptedTooLong
              ? Math.floor((now - interruptedSince!) / 60_000)
              : null,
          },
          {
            dedupeKey: interruptedTooLong
              ? `scanner.stalled:${chain.network}:interrupted:${interruptedSince}`
              : `scanner.stalled:${chain.network}:${last ?? 'never'}`,
          }
        )
      } else if (!stalled && latest?.name === 'scanner.stalled') {
        await raiseNotification(
          'scanner.recovered',
          { network: chain.network, last_scan_at: new Date(last!).toISOString() },
          { dedupeKey: `scanner.recovered:${chain.network}:${latest.id}` }
        )
      }
    }
  }

  async #rates(now: number) {
    // With live sources, the workers' refresh tells of a pair that becomes unusable.
    const liveSources = await settings.get('rate.sources')
    if (liveSources.length > 0) return
    const { rateChecks } = await import('#services/doctor/rate_checks')
    const results = await rateChecks(now)
    const stale = new Set<string>()
    for (const check of results) {
      if (check.status !== 'problem' || !check.subject) continue
      stale.add(check.subject)
      if (this.#staleRates.has(check.subject)) continue
      await raiseNotification(
        'rate.stale',
        { currency: check.subject, finding: check.finding, fix: check.fix },
        // Once an hour at most per currency, however many workers check.
        { dedupeKey: `rate.stale:${check.subject}:${Math.floor(now / 3_600_000)}` }
      )
    }
    this.#staleRates = stale
  }

  async #dailyReport(now: number) {
    const timeZone = await settings.get('notify.time_zone')
    const hour = await settings.get('notify.daily_report_hour')
    const today = zonedParts(now, timeZone)
    if (today.hour < hour) return
    const todayStart = zonedMidnight(today.year, today.month, today.day, timeZone)
    const yesterday = zonedParts(todayStart - 12 * 3_600_000, timeZone)
    const day = isoDay(yesterday.year, yesterday.month, yesterday.day)
    const exists = await db
      .from('notification_events')
      .where('dedupe_key', `daily.report:${day}`)
      .first()
    if (exists) return
    const from = zonedMidnight(yesterday.year, yesterday.month, yesterday.day, timeZone)
    const figures = await dailyFigures(from, todayStart)
    await raiseNotification(
      'daily.report',
      { day, time_zone: timeZone, ...figures },
      { dedupeKey: `daily.report:${day}` }
    )
  }
}

export const notificationWatch = new NotificationWatch()

/** The scheduler's entry (every minute): failures are logged, never thrown at the scheduler. */
export async function watchForNotifications() {
  try {
    await notificationWatch.runOnce()
  } catch (error) {
    logger.error({ err: error }, 'notification watch failed; trying again next minute')
  }
}

/**
 * rpc.budget_low and rpc.exhausted, from the RPC pools of this process (a
 * worker's scans): once per endpoint, budget and UTC day (the dedupe key),
 * raised outside the scan that noticed (never slowing or failing it).
 */
export function raiseRpcBudgetAlert(alert: RpcBudgetAlert, now = Date.now()) {
  const day = new Date(now).toISOString().slice(0, 10)
  const event = alert.level === 'low' ? 'rpc.budget_low' : 'rpc.exhausted'
  const budget = alert.purpose ? ` (${alert.purpose})` : ''
  return raiseNotification(
    event,
    {
      network: alert.network,
      endpoint: `${alert.endpoint}${budget}`,
      used: alert.used,
      per_day: alert.perDay,
      detail: alert.detail,
    },
    { dedupeKey: `${event}:${alert.network}:${alert.endpoint}:${alert.purpose}:${day}` }
  ).catch((error) => {
    logger.error({ err: error }, 'notifications: an RPC budget alert could not be recorded')
    return null
  })
}

onRpcBudgetAlert((alert) => void raiseRpcBudgetAlert(alert))
