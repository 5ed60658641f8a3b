import db from '@adonisjs/lucid/services/db'
import type { DatabaseQueryBuilderContract } from '@adonisjs/lucid/types/querybuilder'
import callbackFormats from '#callbacks/callback_format'
import { toDecimalString } from '#support/text/money'

/**
 * What the console shows of a callback. `held` is a pending callback whose
 * format's plugin is turned off (never sent, no attempt spent: see
 * callback_deliverer.ts); it is not stored as such.
 */
export type CallbackListStatus = 'pending' | 'held' | 'failed' | 'delivered'
export const CALLBACK_LIST_STATUSES: readonly CallbackListStatus[] = [
  'pending',
  'held',
  'failed',
  'delivered',
]

export type CallbackFilters = {
  status?: CallbackListStatus
  pid?: string
  network?: string
  /** Queued (the order paid) at or after, epoch ms. */
  since?: number
  /** Queued before, epoch ms. */
  until?: number
  /** The gateway's trade_id or the merchant's order_id, exactly. */
  search?: string
}

export type CallbackRow = {
  id: number
  orderId: number
  tradeId: string
  merchantOrderId: string
  pid: string
  network: string
  token: string
  actualAmount: string
  notifyUrl: string
  format: string
  status: CallbackListStatus
  attempts: number
  nextAttemptAt: number
  lastHttpStatus: number | null
  lastError: string
  deliveredAt: number | null
  createdAt: number
  updatedAt: number
}

export type CallbackAttemptRow = {
  id: number
  attempt: number
  startedAt: number
  method: string
  url: string
  httpStatus: number | null
  responseExcerpt: string
  error: string
  durationMs: number
  acknowledged: boolean
}

/** A page of rows, newest first; `next` continues after the last one (null: no more). */
export type CallbackPage = { rows: CallbackRow[]; next: string | null }

const MAX_PAGE = 200

function numberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : Number(value)
}

/**
 * Reads the outbox for the console: filtered, newest first, paged by
 * callback id (keyset: the n-th page costs what the first does; the
 * primary key orders it, the order filters use the orders' indexes).
 */
export class CallbackOutboxQuery {
  /**
   * The callbacks matching `filters`, joined with their orders. Used by
   * the list and by the batch redelivery, so both select the same rows.
   */
  scope(filters: CallbackFilters): DatabaseQueryBuilderContract {
    const query = db.from('callbacks as c').join('orders as o', 'o.id', 'c.order_id')
    const loaded = callbackFormats.names()
    switch (filters.status) {
      case 'pending':
        query.where('c.status', 'pending').whereIn('c.format', loaded)
        break
      case 'held':
        query.where('c.status', 'pending').whereNotIn('c.format', loaded)
        break
      case 'failed':
      case 'delivered':
        query.where('c.status', filters.status)
        break
    }
    if (filters.pid) query.where('o.pid', filters.pid)
    if (filters.network) query.where('o.network', filters.network)
    if (filters.since !== undefined) query.where('c.created_at', '>=', filters.since)
    if (filters.until !== undefined) query.where('c.created_at', '<', filters.until)
    if (filters.search) {
      const search = filters.search.trim()
      query.where((match) => match.where('o.trade_id', search).orWhere('o.order_id', search))
    }
    return query
  }

  async list(
    filters: CallbackFilters = {},
    page: { limit?: number; after?: string | null } = {}
  ): Promise<CallbackPage> {
    const limit = Math.min(Math.max(Math.trunc(page.limit ?? 50), 1), MAX_PAGE)
    const query = this.#select(this.scope(filters))
    const after = page.after && /^\d{1,18}$/.test(page.after) ? Number(page.after) : null
    if (after !== null) query.where('c.id', '<', after)
    const raw = await query.orderBy('c.id', 'desc').limit(limit + 1)
    const rows = raw.slice(0, limit).map((row: Record<string, unknown>) => this.#row(row))
    const last = rows.at(-1)
    return { rows, next: raw.length > limit && last ? String(last.id) : null }
  }

  async find(id: number): Promise<CallbackRow | null> {
    const row = await this.#select(
      db.from('callbacks as c').join('orders as o', 'o.id', 'c.order_id')
    )
      .where('c.id', id)
      .first()
    return row ? this.#row(row) : null
  }

  /** Every attempt of a callback, oldest first (a redelivery starts its numbering again). */
  async attempts(callbackId: number): Promise<CallbackAttemptRow[]> {
    const rows = await db
      .from('callback_attempts')
      .where('callback_id', callbackId)
      .orderBy('id', 'asc')
    return rows.map((row: Record<string, any>) => ({
      id: Number(row.id),
      attempt: Number(row.attempt),
      startedAt: Number(row.started_at),
      method: row.method,
      url: row.url,
      httpStatus: numberOrNull(row.http_status),
      responseExcerpt: row.response_excerpt,
      error: row.error,
      durationMs: Number(row.duration_ms),
      acknowledged: Boolean(row.acknowledged),
    }))
  }

  /** How many callbacks are in each state, for the list's tabs. */
  async counts(): Promise<Record<CallbackListStatus, number>> {
    const loaded = callbackFormats.names()
    const rows = await db
      .from('callbacks')
      .select('status', 'format')
      .count('* as total')
      .groupBy('status', 'format')
    const counts: Record<CallbackListStatus, number> = {
      pending: 0,
      held: 0,
      failed: 0,
      delivered: 0,
    }
    for (const row of rows as { status: string; format: string; total: number | string }[]) {
      const status = this.#status(row.status, row.format, loaded)
      if (status) counts[status] += Number(row.total)
    }
    return counts
  }

  #select(query: DatabaseQueryBuilderContract) {
    return query.select(
      'c.*',
      'o.trade_id',
      'o.order_id as merchant_order_id',
      'o.pid',
      'o.network',
      'o.token',
      'o.actual_amount',
      'o.notify_url'
    )
  }

  #status(status: string, format: string, loaded: string[]): CallbackListStatus | null {
    if (status === 'pending') return loaded.includes(format) ? 'pending' : 'held'
    return status === 'failed' || status === 'delivered' ? status : null
  }

  #row(row: Record<string, any>): CallbackRow {
    return {
      id: Number(row.id),
      orderId: Number(row.order_id),
      tradeId: row.trade_id,
      merchantOrderId: row.merchant_order_id,
      pid: row.pid,
      network: row.network,
      token: row.token,
      actualAmount: toDecimalString(row.actual_amount),
      notifyUrl: row.notify_url,
      format: row.format,
      status: this.#status(row.status, row.format, callbackFormats.names()) ?? 'pending',
      attempts: Number(row.attempts),
      nextAttemptAt: Number(row.next_attempt_at),
      lastHttpStatus: numberOrNull(row.last_http_status),
      lastError: row.last_error,
      deliveredAt: numberOrNull(row.delivered_at),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    }
  }
}

const callbackOutboxQuery = new CallbackOutboxQuery()
export default callbackOutboxQuery
