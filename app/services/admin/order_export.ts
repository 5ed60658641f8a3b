import db from '@adonisjs/lucid/services/db'
import type Order from '#models/order'
import { csvRow } from '#support/text/csv'
import orderSearch, {
  ORDER_STATUS_NAMES,
  type OrderFilters,
  type OrderSearch,
} from '#services/admin/order_search'

/** Most orders one export holds; past it the file ends with a line saying so. */
export const EXPORT_ROW_CAP = 100_000
/** Orders read per keyset query while exporting. */
export const EXPORT_BATCH = 1000

export const EXPORT_COLUMNS = [
  'created_at',
  'trade_id',
  'order_id',
  'parent_trade_id',
  'pid',
  'payment_type',
  'status',
  'status_name',
  'name',
  'currency',
  'amount',
  'token',
  'network',
  'receive_address',
  'actual_amount',
  'block_transaction_id',
  'paid_at',
  'expiration_time',
  'callback_status',
  'pay_provider',
  'rate',
  'rate_source',
  'rate_markup',
] as const

export type ExportOptions = { cap?: number; batch?: number }

function iso(epochMs: number | null): string {
  return epochMs === null ? '' : new Date(epochMs).toISOString()
}

/** The last line of a capped export. */
export function cappedNotice(cap: number) {
  return `# capped at ${cap} orders: later rows were left out; narrow the filters (e.g. a date range) to export the rest`
}

/**
 * CSV of a filtered order list, newest first, produced line by line while
 * it is read: one keyset batch is in memory at a time, and the next batch
 * is only queried once the reader has taken the previous one (backpressure
 * through the async iterator), so a 100,000-row file costs what a
 * 1,000-row one does.
 */
export class OrderExport {
  constructor(protected search: Pick<OrderSearch, 'batches'> = orderSearch) {}

  async *lines(filters: OrderFilters, options: ExportOptions = {}): AsyncGenerator<string> {
    const cap = options.cap ?? EXPORT_ROW_CAP
    yield csvRow([...EXPORT_COLUMNS])
    let written = 0
    for await (const batch of this.search.batches(filters, options.batch ?? EXPORT_BATCH)) {
      const parents = await this.#parentTradeIds(batch)
      for (const order of batch) {
        if (written === cap) {
          yield csvRow([cappedNotice(cap)])
          return
        }
        yield this.#row(order, parents)
        written++
      }
    }
  }

  #row(order: Order, parents: Map<number, string>) {
    return csvRow([
      iso(order.createdAt),
      order.tradeId,
      order.orderId,
      order.parentId === null ? '' : (parents.get(order.parentId) ?? ''),
      order.pid,
      order.paymentType,
      order.status,
      ORDER_STATUS_NAMES[order.status] ?? '',
      order.name,
      order.currency,
      order.amount,
      order.token,
      order.network,
      order.receiveAddress,
      order.actualAmount,
      order.blockTransactionId,
      iso(order.paidAt),
      iso(order.expirationTime),
      order.callbackStatus,
      order.payProvider,
      order.rate,
      order.rateSource,
      order.rateMarkup,
    ])
  }

  async #parentTradeIds(batch: Order[]): Promise<Map<number, string>> {
    const ids = [
      ...new Set(batch.map((order) => order.parentId).filter((id): id is number => id !== null)),
    ]
    if (ids.length === 0) return new Map()
    const rows = await db.from('orders').whereIn('id', ids).select('id', 'trade_id')
    return new Map(
      rows.map((row: { id: number | string; trade_id: string }) => [Number(row.id), row.trade_id])
    )
  }
}

const orderExport = new OrderExport()
export default orderExport
