import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import type { Knex } from 'knex'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import ApiKey from '#models/api_key'
import Order from '#models/order'
import settings from '#settings/settings_service'
import callbackFormats from '#callbacks/callback_format'
import { isAcknowledged, retryDelayMs } from '#callbacks/retry_policy'
import { ForbiddenTargetError, safeRequest } from '#callbacks/safe_http'
import { DeliveryLoop, type DrainProgress } from '#callbacks/delivery_loop'
import { claimLeases, releaseLeases } from '#support/database/lease'
import { metrics } from '#support/runtime/metrics'
import { raiseNotification } from '#notifications/notifier'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'

export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed' | 'held'
export type DeliveryReport = {
  claimed: number
  delivered: number
  retrying: number
  failed: number
  held: number
}

export function emptyReport(): DeliveryReport {
  return { claimed: 0, delivered: 0, retrying: 0, failed: 0, held: 0 }
}

/** A callback whose format's plugin is turned off is looked at again after this long. */
export const HELD_RECHECK_MS = 60_000

/**
 * A claim's lease is 2 × the attempt timeout + this margin, so a live
 * worker never loses it: a claimed callback either starts at once, or
 * waits in memory behind at most per_host_concurrency attempts to its
 * merchant (each ending within one timeout), then takes one timeout
 * itself; the margin covers the bookkeeping writes.
 */
export const LEASE_MARGIN_MS = 30_000
const EXCERPT_LENGTH = 200

/**
 * A claimed callback with what its delivery needs, read for a whole claim
 * at once (one joined read of callbacks and orders, one of API keys)
 * rather than order by order.
 */
export type ClaimedCallback = {
  id: number
  claim: string
  format: string
  attempts: number
  nextAttemptAt: number
  order: Order
  apiKey: ApiKey | null
  /** scheme://host:port of the merchant's notify_url: the unit of the per-host cap. */
  origin: string
  timeoutMs: number
}

/** The merchant origin a notify_url leads to ('' when it is not a URL: such a callback fails at once). */
export function originOf(url: string): string {
  try {
    return new URL(url).origin
  } catch {
    return ''
  }
}

/** How long a given-back callback that the origin filter does not recognise is put off. */
const DEFER_MS = 1000

/** Whether the origin filter of a claim (excludeOrigins) recognises `url` as going to `origin`. */
function startsWithOrigin(url: string, origin: string): boolean {
  return url === origin || ['/', '?', '#'].some((next) => url.startsWith(origin + next))
}

/**
 * Leaves out callbacks whose order's notify_url starts with one of `origins`
 * (the hosts that already have their share of slots). Matched on the
 * stored text; a URL written otherwise (upper case, explicit default port)
 * slips through and is deferred by the loop instead.
 */
function excludeOrigins(query: Knex.QueryBuilder, origins: string[]) {
  if (origins.length === 0) return
  query.whereNotExists((orders) => ordersToOrigins(orders, origins))
}

/** Only callbacks whose order's notify_url starts with `origin` (the same match as excludeOrigins). */
function includeOrigin(query: Knex.QueryBuilder, origin: string) {
  query.whereExists((orders) => ordersToOrigins(orders, [origin]))
}

function ordersToOrigins(orders: Knex.QueryBuilder, origins: string[]) {
  orders
    .from('orders')
    .whereRaw('orders.id = callbacks.order_id')
    .where((match) => {
      for (const origin of origins) {
        match
          .orWhere('orders.notify_url', origin)
          .orWhereRaw('substr(orders.notify_url, 1, ?) in (?, ?, ?)', [
            origin.length + 1,
            `${origin}/`,
            `${origin}?`,
            `${origin}#`,
          ])
      }
    })
}

/** The outcome of one attempt, as written to the outbox. */
type AttemptRecord = {
  callbackId: number
  claim: string
  orderId: number
  attempt: Record<string, unknown>
  status: 'pending' | 'delivered' | 'failed'
  attempts: number
  nextAttemptAt: number
  httpStatus: number | null
  error: string
  acknowledged: boolean
}

/**
 * Writes attempts' outcomes (callback_attempts row, outbox row with the
 * lease released, the order's callback columns) with group commit: the
 * outcomes that end while a write is running go together in the next
 * transaction (one commit, one multi-row INSERT), instead of one
 * transaction each. Each attempt's promise resolves once its outcome is
 * committed. Should a group fail, its records are written one transaction
 * each, so one bad record cannot lose the others; a record that still
 * fails rejects (its lease runs out and the callback is attempted again:
 * at least once).
 */
class AttemptRecorder {
  #pending: {
    record: AttemptRecord
    resolve: (held: boolean) => void
    reject: (error: unknown) => void
  }[] = []
  #flushing = false

  record(record: AttemptRecord): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.#pending.push({ record, resolve, reject })
      if (!this.#flushing) this.#flush()
    })
  }

  async #flush() {
    this.#flushing = true
    try {
      // Let the attempts ending in this turn of the event loop join the group.
      await new Promise((resolve) => setImmediate(resolve))
      while (this.#pending.length > 0) {
        const group = this.#pending.splice(0, 200)
        try {
          const held = await this.#write(group.map((entry) => entry.record))
          group.forEach((entry, index) => entry.resolve(held[index]))
        } catch (groupError) {
          if (group.length === 1) {
            group[0].reject(groupError)
            continue
          }
          for (const entry of group) {
            try {
              const [held] = await this.#write([entry.record])
              entry.resolve(held)
            } catch (error) {
              entry.reject(error)
            }
          }
        }
      }
    } finally {
      this.#flushing = false
    }
  }

  /**
   * The operator is told, in the transaction that records the attempt:
   * callback.failing once, when an unacknowledged callback reaches
   * notify.callback_failing_after attempts; callback.gave_up when it runs out.
   */
  async #notify(trx: TransactionClientContract, record: AttemptRecord, failingAfter: number) {
    if (record.acknowledged) return
    const event =
      record.status === 'failed'
        ? 'callback.gave_up'
        : record.status === 'pending' && record.attempts === failingAfter
          ? 'callback.failing'
          : null
    if (!event) return
    const order = await trx
      .from('orders')
      .where('id', record.orderId)
      .select('trade_id', 'order_id', 'notify_url')
      .first()
    await raiseNotification(
      event,
      {
        callback_id: record.callbackId,
        trade_id: order?.trade_id ?? '',
        order_id: order?.order_id ?? '',
        attempts: record.attempts,
        error:
          record.error || (record.httpStatus ? `HTTP ${record.httpStatus}` : 'no acknowledgement'),
      },
      { dedupeKey: `${event}:${record.callbackId}:${record.attempts}` },
      trx
    )
  }

  async #write(records: AttemptRecord[]): Promise<boolean[]> {
    // Read before the transaction: on SQLite it holds the one connection a settings read would wait for.
    const failingAfter = await settings.get('notify.callback_failing_after')
    return db.transaction(async (trx) => {
      const now = Date.now()
      await trx.table('callback_attempts').multiInsert(records.map((record) => record.attempt))
      const held: boolean[] = []
      for (const record of records) {
        const rows = await releaseLeases(
          {
            table: 'callbacks',
            token: record.claim,
            scope: (query) => query.where('id', record.callbackId),
            changes: {
              status: record.status,
              attempts: record.attempts,
              next_attempt_at: record.nextAttemptAt,
              last_http_status: record.httpStatus,
              last_error: record.error,
              delivered_at: record.acknowledged ? now : null,
              updated_at: now,
            },
          },
          trx
        )
        held.push(rows > 0)
        await trx.from('orders').where('id', record.orderId).update({
          callback_status: record.status,
          callback_attempts: record.attempts,
          callback_last_at: now,
        })
        if (rows > 0) await this.#notify(trx, record, failingAfter)
      }
      return held
    })
  }
}

/**
 * Delivers due callbacks from the outbox. Safe to run in several processes:
 * each claims rows with a lease (#support/database/lease), so a callback is
 * never sent by two workers at the same moment. A worker that dies leaves
 * its lease to expire; the callback is then retried by another.
 *
 * The running gateway delivers through the delivery loop
 * (#callbacks/delivery_loop): bounded concurrency, no batch barrier, a cap
 * per merchant host. runOnce() is the one-batch form kept for tests and
 * for the benchmark's "before" figure.
 */
export class CallbackDeliverer {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  #claims = 0
  #recorder = new AttemptRecorder()

  /** Claims up to `limit` due callbacks and delivers them together. */
  async runOnce(limit = 20): Promise<DeliveryReport> {
    return this.#run(limit)
  }

  /**
   * Delivers the callback of one order now if it is due and free (an
   * operator's redeliver): the operator waits for that merchant's answer
   * only, not for other merchants' callbacks that happen to be due.
   */
  async deliverFor(orderId: number): Promise<DeliveryReport> {
    return this.#run(1, orderId)
  }

  async #run(limit: number, orderId?: number): Promise<DeliveryReport> {
    const claimed = await this.claim(limit, { orderId })
    const report = emptyReport()
    report.claimed = claimed.length
    const outcomes = await Promise.all(claimed.map((callback) => this.deliver(callback)))
    for (const outcome of outcomes) report[outcome]++
    return report
  }

  /**
   * Runs until nothing is due (the ace command), through the delivery loop:
   * up to callbacks.concurrency in flight, per-host cap applied.
   */
  async drain(onProgress?: (progress: DrainProgress) => void): Promise<DeliveryReport> {
    return new DeliveryLoop(this, { untilIdle: true, onProgress }).run()
  }

  /**
   * Claims up to `limit` due callbacks (leaving out those to `busyOrigins`,
   * or only those to `onlyOrigin`) and reads their orders and API keys: three statements whatever the
   * number claimed.
   */
  async claim(
    limit: number,
    options: { orderId?: number; busyOrigins?: string[]; onlyOrigin?: string } = {}
  ): Promise<ClaimedCallback[]> {
    if (limit <= 0) return []
    const timeoutMs = (await settings.get('callbacks.timeout_seconds')) * 1000
    // Each claim has its own token, so two claims never mistake each other's rows.
    const claim = `${this.workerId}:${++this.#claims}`
    const now = Date.now()
    const ids = await claimLeases({
      table: 'callbacks',
      token: claim,
      leaseMs: 2 * timeoutMs + LEASE_MARGIN_MS,
      scope: (query) => {
        query.where('status', 'pending').where('next_attempt_at', '<=', now)
        if (options.orderId !== undefined) query.where('order_id', options.orderId)
        excludeOrigins(query, options.busyOrigins ?? [])
        if (options.onlyOrigin !== undefined) includeOrigin(query, options.onlyOrigin)
      },
      orderBy: 'next_attempt_at',
      limit,
      now,
      set: { updated_at: now },
    })
    if (ids.length === 0) return []

    const orders = await Order.query()
      .join('callbacks', 'callbacks.order_id', 'orders.id')
      .whereIn('callbacks.id', ids)
      .where('callbacks.locked_by', claim)
      .select(
        'orders.*',
        'callbacks.id as outbox_id',
        'callbacks.format as outbox_format',
        'callbacks.attempts as outbox_attempts',
        'callbacks.next_attempt_at as outbox_next_attempt_at'
      )
    // Driven by the claimed ids only (no sort or status filter the planner could serve by walking the outbox).
    orders.sort(
      (a, b) => Number(a.$extras.outbox_next_attempt_at) - Number(b.$extras.outbox_next_attempt_at)
    )
    const apiKeys = await this.#apiKeysOf(orders)

    return orders.map((order) => ({
      id: Number(order.$extras.outbox_id),
      claim,
      format: String(order.$extras.outbox_format),
      attempts: Number(order.$extras.outbox_attempts),
      nextAttemptAt: Number(order.$extras.outbox_next_attempt_at),
      order,
      apiKey:
        (order.apiKeyId !== null
          ? apiKeys.find((key) => Number(key.id) === Number(order.apiKeyId))
          : apiKeys.find((key) => key.pid === order.pid)) ?? null,
      origin: originOf(order.notifyUrl),
      timeoutMs,
    }))
  }

  /** The API keys of `orders` (by id, or by pid for orders written before keys had ids), in one read. */
  async #apiKeysOf(orders: Order[]): Promise<ApiKey[]> {
    const ids = [
      ...new Set(
        orders.filter((order) => order.apiKeyId !== null).map((order) => Number(order.apiKeyId))
      ),
    ]
    const pids = [
      ...new Set(orders.filter((order) => order.apiKeyId === null).map((order) => order.pid)),
    ]
    if (ids.length === 0 && pids.length === 0) return []
    return ApiKey.query().where((query) => {
      if (ids.length) query.whereIn('id', ids)
      if (pids.length) query.orWhereIn('pid', pids)
    })
  }

  /**
   * Gives claimed callbacks back unsent (their merchant had no free slot):
   * no attempt is spent and they stay due. One whose notify_url the
   * claim's origin filter recognises is skipped by the next claims while
   * its merchant is busy; any other (a URL spelled otherwise than its
   * origin) is put off by DEFER_MS so that it is not claimed again at once.
   */
  async giveBack(callbacks: ClaimedCallback[]) {
    const now = Date.now()
    const recognised = callbacks.filter((callback) =>
      startsWithOrigin(callback.order.notifyUrl, callback.origin)
    )
    const others = callbacks.filter((callback) => !recognised.includes(callback))
    for (const [group, changes] of [
      [recognised, { updated_at: now }],
      [others, { next_attempt_at: now + DEFER_MS, updated_at: now }],
    ] as const) {
      const byClaim = new Map<string, number[]>()
      for (const callback of group)
        byClaim.set(callback.claim, [...(byClaim.get(callback.claim) ?? []), callback.id])
      for (const [claim, ids] of byClaim) {
        await releaseLeases({
          table: 'callbacks',
          token: claim,
          scope: (query) => query.whereIn('id', ids),
          changes,
        })
      }
    }
  }

  /**
   * When the next free pending callback is due (null: none pending): the
   * loop sleeps until then. Leased rows are left out; their holder either
   * finishes them or its lease runs out, which the loop's poll notices.
   */
  async nextDueAt(): Promise<number | null> {
    const now = Date.now()
    const row = await db
      .from('callbacks')
      .where('status', 'pending')
      .where((free) => free.whereNull('locked_until').orWhere('locked_until', '<', now))
      .min('next_attempt_at as next')
      .first()
    return row?.next === null || row?.next === undefined ? null : Number(row.next)
  }

  /**
   * The plugin that formats this callback is turned off: nothing is sent
   * and no attempt is spent (retries must not run out while an operator
   * has a plugin off); the callback stays pending and is looked at again
   * later, so it goes out once the plugin is back.
   */
  async #hold(callback: ClaimedCallback): Promise<'held'> {
    const now = Date.now()
    const reason = `not sent: the "${callback.format}" callback format is not loaded (its plugin is turned off); held until it is back`
    await releaseLeases({
      table: 'callbacks',
      token: callback.claim,
      scope: (query) => query.where('id', callback.id),
      changes: { next_attempt_at: now + HELD_RECHECK_MS, last_error: reason, updated_at: now },
    })
    logger.warn(
      { callback_id: callback.id, format: callback.format },
      'merchant callback held: its format is not loaded'
    )
    return 'held'
  }

  /**
   * One attempt of a claimed callback, recorded (attempt row, outbox row,
   * order) in one transaction (AttemptRecorder). `onSent` is called as soon
   * as the HTTP exchange is over, before the record is written: the
   * merchant's slot can be reused while the outcome is being committed.
   */
  async deliver(callback: ClaimedCallback, onSent?: () => void): Promise<DeliveryOutcome> {
    let sent = false
    const exchangeOver = () => {
      if (sent) return
      sent = true
      onSent?.()
    }
    try {
      const outcome = await this.#attempt(callback, exchangeOver)
      metrics.callbackAttempts.inc({ outcome })
      return outcome
    } finally {
      exchangeOver()
    }
  }

  /** `exchangeOver` is called once the merchant's answer is in (or the request failed), before it is recorded. */
  async #attempt(callback: ClaimedCallback, exchangeOver: () => void): Promise<DeliveryOutcome> {
    if (!callbackFormats.has(callback.format)) return this.#hold(callback)
    const { order, apiKey } = callback
    const attempt = callback.attempts + 1
    const startedAt = Date.now()

    let httpStatus: number | null = null
    let excerpt = ''
    let error = ''
    let permanent = false
    let method: 'GET' | 'POST' = 'POST'
    let url = order.notifyUrl
    try {
      if (!apiKey) throw new Error(`the API key of pid ${order.pid} no longer exists`)
      const request = callbackFormats.get(callback.format).build(order, apiKey)
      method = request.method
      url = request.url
      const response = await safeRequest(request, {
        timeoutMs: callback.timeoutMs,
        allowPrivateTargets: await settings.get('callbacks.allow_private_targets'),
      })
      httpStatus = response.status
      excerpt = response.body.slice(0, EXCERPT_LENGTH)
      if (!isAcknowledged(response.status, response.body)) {
        error = `not acknowledged: HTTP ${response.status}, expected 200 with body "ok" or "success"`
      }
    } catch (caught) {
      error = (caught as Error).message || String(caught)
      permanent = caught instanceof ForbiddenTargetError
    }
    exchangeOver()
    const durationMs = Date.now() - startedAt
    const acknowledged = error === ''

    const maxRetries = await settings.get('order_notice_max_retry')
    let outcome: 'delivered' | 'retrying' | 'failed'
    let nextAttemptAt = callback.nextAttemptAt
    if (acknowledged) outcome = 'delivered'
    else if (!permanent && attempt <= maxRetries) {
      outcome = 'retrying'
      nextAttemptAt =
        Date.now() + retryDelayMs(attempt, await settings.get('callback_retry_base_seconds'))
    } else outcome = 'failed'

    const held = await this.#recorder.record({
      callbackId: callback.id,
      claim: callback.claim,
      orderId: order.id,
      attempt: {
        callback_id: callback.id,
        attempt,
        started_at: startedAt,
        method,
        url,
        http_status: httpStatus,
        response_excerpt: excerpt,
        error,
        duration_ms: durationMs,
        acknowledged,
      },
      status: outcome === 'retrying' ? 'pending' : outcome,
      attempts: attempt,
      nextAttemptAt,
      httpStatus,
      error,
      acknowledged,
    })
    if (!held) {
      logger.warn(
        { trade_id: order.tradeId },
        'callback lease lost while delivering; another worker owns it now'
      )
    }

    const log = {
      trade_id: order.tradeId,
      attempt,
      url,
      http_status: httpStatus,
      ms: durationMs,
      error,
    }
    if (outcome === 'delivered') logger.info(log, 'merchant callback delivered')
    else if (outcome === 'retrying')
      logger.warn(
        { ...log, next_attempt_at: nextAttemptAt },
        'merchant callback failed; will retry'
      )
    else logger.error(log, 'merchant callback failed for good')
    return outcome
  }
}

const callbackDeliverer = new CallbackDeliverer()
export default callbackDeliverer
