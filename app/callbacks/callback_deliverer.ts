import { hostname } from 'node:os'
import { randomBytes } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import logger from '@adonisjs/core/services/logger'
import ApiKey from '#models/api_key'
import Callback from '#models/callback'
import Order from '#models/order'
import settings from '#settings/settings_service'
import callbackFormats from '#callbacks/callback_format'
import { isAcknowledged, retryDelayMs } from '#callbacks/retry_policy'
import { ForbiddenTargetError, safeRequest } from '#callbacks/safe_http'
import { claimLeases, releaseLeases } from '#support/lease'

export type DeliveryReport = { claimed: number; delivered: number; retrying: number; failed: number; held: number }

/** A callback whose format's plugin is turned off is looked at again after this long. */
export const HELD_RECHECK_MS = 60_000

/** Longer than any attempt can take, so a live worker never loses its lease. */
const LEASE_MARGIN_MS = 30_000
const EXCERPT_LENGTH = 200

/**
 * Delivers due callbacks from the outbox. Safe to run in several processes:
 * each claims rows with a lease (#support/lease), so a callback is
 * never sent by two workers at the same moment. A worker that dies leaves
 * its lease to expire; the callback is then retried by another.
 */
export class CallbackDeliverer {
  readonly workerId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`
  #claims = 0

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
    const timeoutMs = (await settings.get('callbacks.timeout_seconds')) * 1000
    // Each claim has its own token, so two claims never mistake each other's rows.
    const claim = `${this.workerId}:${++this.#claims}`
    const claimed = await this.#claim(claim, limit, timeoutMs + LEASE_MARGIN_MS, orderId)
    const report: DeliveryReport = { claimed: claimed.length, delivered: 0, retrying: 0, failed: 0, held: 0 }
    const outcomes = await Promise.all(claimed.map((callback) => this.#deliver(callback, claim, timeoutMs)))
    for (const outcome of outcomes) report[outcome]++
    return report
  }

  /** Runs until nothing is due (for the ace command). */
  async drain(): Promise<DeliveryReport> {
    const total: DeliveryReport = { claimed: 0, delivered: 0, retrying: 0, failed: 0, held: 0 }
    for (;;) {
      const report = await this.runOnce()
      for (const key of Object.keys(total) as (keyof DeliveryReport)[]) total[key] += report[key]
      if (report.claimed === 0) return total
    }
  }

  async #claim(claim: string, limit: number, leaseMs: number, orderId?: number): Promise<Callback[]> {
    const now = Date.now()
    await claimLeases({
      table: 'callbacks',
      token: claim,
      leaseMs,
      scope: (query) => {
        query.where('status', 'pending').where('next_attempt_at', '<=', now)
        if (orderId !== undefined) query.where('order_id', orderId)
      },
      orderBy: 'next_attempt_at',
      limit,
      now,
      set: { updated_at: now },
    })
    return Callback.query().where('locked_by', claim).where('status', 'pending')
  }

  /**
   * The plugin that formats this callback is turned off: nothing is sent
   * and no attempt is spent (retries must not run out while an operator
   * has a plugin off); the callback stays pending and is looked at again
   * later, so it goes out once the plugin is back.
   */
  async #hold(callback: Callback, claim: string): Promise<'held'> {
    const now = Date.now()
    const reason = `not sent: the "${callback.format}" callback format is not loaded (its plugin is turned off); held until it is back`
    await releaseLeases({
      table: 'callbacks',
      token: claim,
      scope: (query) => query.where('id', callback.id),
      changes: { next_attempt_at: now + HELD_RECHECK_MS, last_error: reason, updated_at: now },
    })
    logger.warn({ callback_id: callback.id, format: callback.format }, 'merchant callback held: its format is not loaded')
    return 'held'
  }

  async #deliver(
    callback: Callback,
    claim: string,
    timeoutMs: number
  ): Promise<'delivered' | 'retrying' | 'failed' | 'held'> {
    if (!callbackFormats.has(callback.format)) return this.#hold(callback, claim)
    const order = await Order.findOrFail(callback.orderId)
    const apiKey = order.apiKeyId !== null ? await ApiKey.find(order.apiKeyId) : await ApiKey.findBy('pid', order.pid)
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
        timeoutMs,
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
    const durationMs = Date.now() - startedAt
    const acknowledged = error === ''

    const maxRetries = await settings.get('order_notice_max_retry')
    let outcome: 'delivered' | 'retrying' | 'failed'
    let nextAttemptAt = callback.nextAttemptAt
    if (acknowledged) outcome = 'delivered'
    else if (!permanent && attempt <= maxRetries) {
      outcome = 'retrying'
      nextAttemptAt = Date.now() + retryDelayMs(attempt, await settings.get('callback_retry_base_seconds'))
    } else outcome = 'failed'

    await db.transaction(async (trx) => {
      const now = Date.now()
      await trx.table('callback_attempts').insert({
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
      })
      const held = await releaseLeases(
        {
          table: 'callbacks',
          token: claim,
          scope: (query) => query.where('id', callback.id),
          changes: {
            status: outcome === 'retrying' ? 'pending' : outcome,
            attempts: attempt,
            next_attempt_at: nextAttemptAt,
            last_http_status: httpStatus,
            last_error: error,
            delivered_at: acknowledged ? now : null,
            updated_at: now,
          },
        },
        trx
      )
      if (held === 0) {
        logger.warn({ trade_id: order.tradeId }, 'callback lease lost while delivering; another worker owns it now')
      }
      await trx.from('orders').where('id', order.id).update({
        callback_status: outcome === 'retrying' ? 'pending' : outcome,
        callback_attempts: attempt,
        callback_last_at: now,
      })
    })

    const log = { trade_id: order.tradeId, attempt, url, http_status: httpStatus, ms: durationMs, error }
    if (outcome === 'delivered') logger.info(log, 'merchant callback delivered')
    else if (outcome === 'retrying') logger.warn({ ...log, next_attempt_at: nextAttemptAt }, 'merchant callback failed; will retry')
    else logger.error(log, 'merchant callback failed for good')
    return outcome
  }
}

const callbackDeliverer = new CallbackDeliverer()
export default callbackDeliverer
