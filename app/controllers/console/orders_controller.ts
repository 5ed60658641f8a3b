import { utcSecond } from '#services/console/console_format'
import { Readable } from 'node:stream'
import { inject } from '@adonisjs/core'
import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'
import { errors as vineErrors } from '@vinejs/vine'
import Order from '#models/order'
import orderSearch, {
  ORDER_PAGE_SIZE,
  ORDER_STATUS_NAMES,
  type OrderFilters,
} from '#services/console/order_search'
import orderExport, { EXPORT_ROW_CAP } from '#services/console/order_export'
import { OrderDetails } from '#services/console/order_detail'
import { OrderAdmin } from '#services/operators/order_admin'
import { ConsoleNotFound } from '#console/console_errors'
import { adminUrl } from '#console/console_paths'
import { markPaidValidator, orderFiltersValidator } from '#validators/console_orders'

const DAY_MS = 86_400_000
/** The filter form's fields, in the order they are written into links. */
const FILTER_FIELDS = [
  'q',
  'status',
  'network',
  'token',
  'pid',
  'payment_type',
  'from',
  'to',
] as const
const CURSOR_FIELDS = ['after', 'before'] as const

const STATUS_TONES: Record<number, string> = { 1: 'info', 2: 'success', 3: 'neutral', 4: 'warning' }
const CALLBACK_TONES: Record<string, string> = {
  delivered: 'success',
  pending: 'warning',
  failed: 'danger',
  none: 'neutral',
}

/** What the order views use to show values (times in UTC, statuses in words). */
const labels = {
  utc: utcSecond,
  statusName: (status: number) => ORDER_STATUS_NAMES[status] ?? `status ${status}`,
  statusTone: (status: number) => STATUS_TONES[status] ?? 'neutral',
  callbackTone: (status: string) => CALLBACK_TONES[status] ?? 'neutral',
}

/** The query's filter and cursor values as given, trimmed, empty ones left out. */
function given(query: Record<string, unknown>) {
  const values: Record<string, string> = {}
  for (const field of [...FILTER_FIELDS, ...CURSOR_FIELDS]) {
    const value = query[field]
    if (typeof value === 'string' && value.trim() !== '') values[field] = value.trim()
  }
  return values
}

function utcDay(day: string) {
  const [year, month, date] = day.split('-').map(Number)
  return Date.UTC(year, month - 1, date)
}

/** The URL of the list with `params` (and a cursor). */
function listUrl(params: Record<string, string>, cursor: Record<string, string> = {}) {
  const query = new URLSearchParams({ ...params, ...cursor }).toString()
  return adminUrl('/orders') + (query ? `?${query}` : '')
}

function detailUrl(tradeId: string) {
  return adminUrl(`/orders/${encodeURIComponent(tradeId)}`)
}

/**
 * The console's orders: the list (filters, exact search, keyset pages),
 * the CSV export of a filtered list, the order page, and the operators'
 * actions on an order through OrderAdmin, the service of orders:mark-paid,
 * orders:close and callbacks:redeliver.
 */
@inject()
export default class OrdersController {
  constructor(
    protected orders: OrderAdmin,
    protected details: OrderDetails
  ) {}

  async index(ctx: HttpContext) {
    const filters = await this.#filters(ctx)
    if (!filters) return
    const { params, values, cursor } = filters
    const page = await orderSearch.page(values, cursor)
    return ctx.view.render('console/orders/index', {
      orders: page.orders,
      params,
      filtered: Object.keys(params).length > 0,
      pageSize: ORDER_PAGE_SIZE,
      nextUrl: page.next ? listUrl(params, { after: page.next }) : null,
      previousUrl: page.previous ? listUrl(params, { before: page.previous }) : null,
      firstUrl: page.previous ? listUrl(params) : null,
      resetUrl: adminUrl('/orders'),
      exportUrl:
        adminUrl('/orders/export.csv') +
        (Object.keys(params).length ? `?${new URLSearchParams(params)}` : ''),
      exportCap: EXPORT_ROW_CAP,
      choices: await this.#choices(params),
      ...labels,
    })
  }

  /** The filtered list as CSV, streamed (one keyset batch in memory at a time), capped at EXPORT_ROW_CAP rows. */
  async export(ctx: HttpContext) {
    const filters = await this.#filters(ctx)
    if (!filters) return
    const stamp = new Date().toISOString().slice(0, 16).replace(/[-:]/g, '').replace('T', '-')
    ctx.response.header('content-type', 'text/csv; charset=utf-8')
    ctx.response.header('content-disposition', `attachment; filename="orders-${stamp}.csv"`)
    ctx.response.stream(Readable.from(orderExport.lines(filters.values)))
  }

  async show({ params, view }: HttpContext) {
    const detail = await this.details.find(String(params.tradeId))
    if (!detail) throw new ConsoleNotFound(`No order has the trade_id ${params.tradeId}.`)
    return view.render('console/orders/show', { ...detail, ...labels })
  }

  async markPaid({ params, request, session, response }: HttpContext) {
    const tradeId = await this.#existing(params.tradeId)
    const { reference } = await request.validateUsing(markPaidValidator)
    const paid = await this.orders.markPaid(tradeId, reference)
    const told = paid.notified
      ? ` The merchant's callback is queued${paid.notified.tradeId === tradeId ? '' : ` (for the parent order ${paid.notified.tradeId})`}.`
      : ''
    session.flash(
      'success',
      `Order ${tradeId} is paid by ${paid.reference}, verified on ${paid.order.network}.${told}`
    )
    return response.redirect(detailUrl(tradeId))
  }

  async close({ params, session, response }: HttpContext) {
    const tradeId = await this.#existing(params.tradeId)
    const { child } = await this.orders.close(tradeId)
    session.flash(
      'success',
      `Order ${tradeId} is closed: it can no longer be paid, and its amount stays reserved for late payments for a while.` +
        (child ? ` Its child order ${child.tradeId} was closed with it.` : '')
    )
    return response.redirect(detailUrl(tradeId))
  }

  async resendCallback({ params, session, response }: HttpContext) {
    const tradeId = await this.#existing(params.tradeId)
    const { order, report, attempt } = await this.orders.resendCallback(tradeId)
    const whose =
      order.tradeId === tradeId ? `order ${tradeId}` : `the parent order ${order.tradeId}`
    if (attempt?.acknowledged) {
      session.flash(
        'success',
        `The merchant acknowledged the callback of ${whose} (HTTP ${attempt.httpStatus} in ${attempt.durationMs} ms).`
      )
    } else if (attempt) {
      session.flash(
        'warning',
        `The callback of ${whose} was sent again but not acknowledged: ${attempt.error}. It will be retried (status: ${order.callbackStatus}).`
      )
    } else if (report.held > 0) {
      session.flash(
        'warning',
        `The callback of ${whose} is queued again, but held: its callback format's plugin is turned off.`
      )
    } else {
      session.flash(
        'info',
        `The callback of ${whose} is queued again; another worker is sending it now.`
      )
    }
    return response.redirect(detailUrl(tradeId))
  }

  /** The trade_id of an existing order, or the 404 page. */
  async #existing(tradeId: unknown): Promise<string> {
    const value = String(tradeId)
    const found = await Order.query().where('trade_id', value).select('id').first()
    if (!found) throw new ConsoleNotFound(`No order has the trade_id ${value}.`)
    return value
  }

  /**
   * The list's filters from the query string, or null after sending the
   * operator back to the list with what is wrong (the values kept).
   */
  async #filters(ctx: HttpContext) {
    const input = given(ctx.request.qs())
    try {
      const valid = await orderFiltersValidator.validate(input)
      const params: Record<string, string> = {}
      for (const field of FILTER_FIELDS)
        if (input[field] !== undefined) params[field] = input[field]
      const values: OrderFilters = {
        search: valid.q,
        status: valid.status,
        network: valid.network,
        token: valid.token,
        pid: valid.pid,
        paymentType: valid.payment_type,
        createdFrom: input.from ? utcDay(input.from) : undefined,
        createdUntil: input.to ? utcDay(input.to) + DAY_MS : undefined,
      }
      return {
        params,
        values,
        cursor: { after: valid.after ?? null, before: valid.before ?? null },
      }
    } catch (error) {
      if (!(error instanceof vineErrors.E_VALIDATION_ERROR)) throw error
      const bag: Record<string, string[]> = {}
      for (const { field, message } of error.messages as { field: string; message: string }[])
        (bag[field] ??= []).push(message)
      for (const field of FILTER_FIELDS)
        if (input[field] !== undefined) ctx.session.flash(field, input[field])
      ctx.session.flash('inputErrorsBag', bag)
      ctx.session.flash(
        'error',
        'Some filters are not valid (see the form); the list shows every order meanwhile.'
      )
      ctx.response.redirect(adminUrl('/orders'))
      return null
    }
  }

  /** The choices of the filter form's selects (a value given but unknown stays selectable). */
  async #choices(params: Record<string, string>) {
    const [chains, tokens, keys] = await Promise.all([
      db.from('chains').orderBy('sort_order').orderBy('network').select('network', 'display_name'),
      db.from('tokens').distinct('symbol').orderBy('symbol'),
      db.from('api_keys').orderBy('pid').select('pid'),
    ])
    const withCurrent = (list: { value: string; label: string }[], current?: string) =>
      current && !list.some((entry) => entry.value === current)
        ? [...list, { value: current, label: current }]
        : list
    return {
      statuses: [
        { value: '', label: 'Any status' },
        ...[1, 2, 3, 4].map((status) => ({
          value: String(status),
          label: labels.statusName(status),
        })),
      ],
      networks: withCurrent(
        [
          { value: '', label: 'Any network' },
          ...chains.map((chain: { network: string; display_name: string }) => ({
            value: chain.network,
            label: chain.display_name || chain.network,
          })),
          { value: 'provider', label: 'Hosted provider' },
        ],
        params.network
      ),
      tokens: withCurrent(
        [
          { value: '', label: 'Any token' },
          ...tokens.map((token: { symbol: string }) => ({
            value: token.symbol,
            label: token.symbol,
          })),
        ],
        params.token
      ),
      pids: withCurrent(
        [
          { value: '', label: 'Any API key' },
          ...keys.map((key: { pid: string }) => ({ value: key.pid, label: key.pid })),
        ],
        params.pid
      ),
      paymentTypes: [
        { value: '', label: 'Any type' },
        { value: 'Native', label: 'Native' },
        { value: 'Compat', label: 'Compat' },
      ],
    }
  }
}
