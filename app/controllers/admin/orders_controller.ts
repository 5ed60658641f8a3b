import { utcSecond } from '#services/admin/admin_format'
import type { I18n } from '@adonisjs/i18n'
import { Readable } from 'node:stream'
import type { HttpContext } from '@adonisjs/core/http'
import db from '@adonisjs/lucid/services/db'
import { errors as vineErrors } from '@vinejs/vine'
import Order from '#models/order'
import orderSearch, { ORDER_PAGE_SIZE, type OrderFilters } from '#services/admin/order_search'
import orderExport, { EXPORT_ROW_CAP } from '#services/admin/order_export'
import orderDetails, { positionInWords } from '#services/admin/order_detail'
import orderAdmin from '#services/operators/order_admin'
import { AdminNotFound } from '#admin/admin_errors'
import { refusalText } from '#admin/refusal_text'
import { adminUrl } from '#admin/admin_paths'
import { markPaidValidator, orderFiltersValidator } from '#validators/admin_orders'
import providers from '#payments/payment_provider'
import pluginRegistry from '#plugin_host/plugin_registry'

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

/**
 * What the order views use to show values in the admin's language (times
 * in UTC, statuses and positions in words). The CSV export keeps its own
 * English words (order_export.ts): machines read it.
 */
function labelsFor(i18n: I18n) {
  return {
    utc: utcSecond,
    statusName: (status: number) =>
      i18n.t('admin.orders.status.' + status, {}, i18n.t('admin.orders.status_other', { status })),
    statusTone: (status: number) => STATUS_TONES[status] ?? 'neutral',
    callbackName: (status: string) => i18n.t('admin.orders.callback_status.' + status, {}, status),
    callbackTone: (status: string) => CALLBACK_TONES[status] ?? 'neutral',
    sourceName: (source: string) => i18n.t('admin.orders.source.' + source, {}, source),
    positionName: (position: string) => positionInWords(i18n, position),
  }
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
export default class OrdersController {
  constructor(
    protected orders = orderAdmin,
    protected details = orderDetails
  ) {}

  async index(ctx: HttpContext) {
    const filters = await this.#filters(ctx)
    if (!filters) return
    const { params, values, cursor } = filters
    const page = await orderSearch.page(values, cursor)
    return ctx.view.render('admin/orders/index', {
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
      exportCap: EXPORT_ROW_CAP.toLocaleString('en'),
      choices: await this.#choices(params, ctx.i18n),
      ...labelsFor(ctx.i18n),
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

  async show({ params, view, i18n }: HttpContext) {
    const detail = await this.details.find(String(params.tradeId))
    if (!detail) {
      throw new AdminNotFound(
        i18n.t('admin.orders.flash.not_found', { tradeId: String(params.tradeId) })
      )
    }
    const labels = labelsFor(i18n)
    // A notice's position in words: that of the reference it is about (the same row).
    const reorgs = detail.reorgs.map((reorg) => {
      const same = detail.references.find(
        (reference) =>
          reference.tradeId === reorg.tradeId &&
          reference.reference === reorg.reference &&
          reference.positionText === reorg.positionText
      )
      return same ? { ...reorg, positionText: labels.positionName(same.position) } : reorg
    })
    // Why an action is not offered, in the admin's language.
    const refusals = Object.fromEntries(
      Object.entries(detail.refusalErrors).map(([action, refusal]) => [
        action,
        refusal ? refusalText(i18n, refusal) : null,
      ])
    )
    return view.render('admin/orders/show', { ...detail, reorgs, refusals, ...labels })
  }

  async markPaid({ params, request, session, response, i18n }: HttpContext) {
    const tradeId = await this.#existing(params.tradeId, i18n)
    const { reference } = await request.validateUsing(markPaidValidator)
    const paid = await this.orders.markPaid(tradeId, reference)
    const values = { tradeId, reference: paid.reference, network: paid.order.network }
    session.flash(
      'success',
      !paid.notified
        ? i18n.t('admin.orders.flash.paid', values)
        : paid.notified.tradeId === tradeId
          ? i18n.t('admin.orders.flash.paid_queued', values)
          : i18n.t('admin.orders.flash.paid_queued_parent', {
              ...values,
              parent: paid.notified.tradeId,
            })
    )
    return response.redirect(detailUrl(tradeId))
  }

  async close({ params, session, response, i18n }: HttpContext) {
    const tradeId = await this.#existing(params.tradeId, i18n)
    const { child } = await this.orders.close(tradeId)
    session.flash(
      'success',
      child
        ? i18n.t('admin.orders.flash.closed_child', { tradeId, child: child.tradeId })
        : i18n.t('admin.orders.flash.closed', { tradeId })
    )
    return response.redirect(detailUrl(tradeId))
  }

  async resendCallback({ params, session, response, i18n }: HttpContext) {
    const tradeId = await this.#existing(params.tradeId, i18n)
    const { order, report, attempt } = await this.orders.resendCallback(tradeId)
    const whose =
      order.tradeId === tradeId
        ? i18n.t('admin.orders.flash.whose_self', { tradeId })
        : i18n.t('admin.orders.flash.whose_parent', { tradeId: order.tradeId })
    if (attempt?.acknowledged) {
      session.flash(
        'success',
        i18n.t('admin.orders.flash.acknowledged', {
          whose,
          status: attempt.httpStatus,
          ms: attempt.durationMs,
        })
      )
    } else if (attempt) {
      session.flash(
        'warning',
        i18n.t('admin.orders.flash.not_acknowledged', {
          whose,
          error: attempt.error,
          status: labelsFor(i18n).callbackName(order.callbackStatus),
        })
      )
    } else if (report.held > 0) {
      session.flash('warning', i18n.t('admin.orders.flash.held', { whose }))
    } else {
      session.flash('info', i18n.t('admin.orders.flash.busy', { whose }))
    }
    return response.redirect(detailUrl(tradeId))
  }

  /** The trade_id of an existing order, or the 404 page. */
  async #existing(tradeId: unknown, i18n: I18n): Promise<string> {
    const value = String(tradeId)
    const found = await Order.query().where('trade_id', value).select('id').first()
    if (!found) throw new AdminNotFound(i18n.t('admin.orders.flash.not_found', { tradeId: value }))
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
      ctx.session.flash('error', ctx.i18n.t('admin.orders.filter.invalid'))
      ctx.response.redirect(adminUrl('/orders'))
      return null
    }
  }

  /** The choices of the filter form's selects (a value given but unknown stays selectable). */
  async #choices(params: Record<string, string>, i18n: I18n) {
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
        { value: '', label: i18n.t('admin.orders.filter.any_status') },
        ...[1, 2, 3, 4].map((status) => ({
          value: String(status),
          label: labelsFor(i18n).statusName(status),
        })),
      ],
      networks: withCurrent(
        [
          { value: '', label: i18n.t('admin.orders.filter.any_network') },
          ...chains.map((chain: { network: string; display_name: string }) => ({
            value: chain.network,
            label: chain.display_name || chain.network,
          })),
          ...providers.all().map((provider) => ({
            value: provider.name,
            label:
              providers.all().length === 1
                ? i18n.t('admin.orders.filter.hosted_provider')
                : `${i18n.t('admin.orders.filter.hosted_provider')}: ${provider.name}`,
          })),
        ],
        params.network
      ),
      tokens: withCurrent(
        [
          { value: '', label: i18n.t('admin.orders.filter.any_token') },
          ...tokens.map((token: { symbol: string }) => ({
            value: token.symbol,
            label: token.symbol,
          })),
        ],
        params.token
      ),
      pids: withCurrent(
        [
          { value: '', label: i18n.t('admin.orders.filter.any_key') },
          ...keys.map((key: { pid: string }) => ({ value: key.pid, label: key.pid })),
        ],
        params.pid
      ),
      paymentTypes: [
        { value: '', label: i18n.t('admin.orders.filter.any_type') },
        ...pluginRegistry.paymentTypes().map((type) => ({ value: type, label: type })),
      ],
    }
  }
}
