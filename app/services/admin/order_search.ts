import Order from '#models/order'
import chainRegistry from '#chains/chain_registry'
import type { ModelQueryBuilderContract } from '@adonisjs/lucid/types/model'

/** Rows per page of the console's order list. */
export const ORDER_PAGE_SIZE = 50
/** Largest page a caller may ask for (the CSV export reads batches of this size). */
export const MAX_ORDER_PAGE = 1000

/** What each status means, in the console's words. */
export const ORDER_STATUS_NAMES: Record<number, string> = {
  1: 'waiting',
  2: 'paid',
  3: 'expired',
  4: 'selecting',
}

export type OrderFilters = {
  status?: number
  network?: string
  token?: string
  /** The API key's pid. */
  pid?: string
  paymentType?: string
  /** Created at or after (epoch ms). */
  createdFrom?: number
  /** Created before (epoch ms, exclusive). */
  createdUntil?: number
  /**
   * A trade_id, merchant order number, receiving address or transaction
   * reference, matched EXACTLY (each is one index probe; a prefix match
   * could not use a plain index on both engines). Addresses are also tried
   * in each chain family's canonical form (a lower-case address finds the
   * checksummed one where a family checksums by case), hex references also
   * in lower case.
   */
  search?: string
}

export type OrderPageRequest = {
  /** `next` of the previous page: the page of older orders after it. */
  after?: string | null
  /** `previous` of the following page: the page of newer orders before it. */
  before?: string | null
  limit?: number
}

/** Newest first. `next`/`previous` are opaque cursors, null at either end. */
export type OrderPage = { orders: Order[]; next: string | null; previous: string | null }

type Position = { createdAt: number; id: number }
type Direction = 'older' | 'newer'
type Match = {
  column: 'trade_id' | 'order_id' | 'receive_address' | 'block_transaction_id'
  value: string
}

/** Column widths: a longer term cannot match (and is not sent). */
const WIDTH: Record<Match['column'], number> = {
  trade_id: 32,
  order_id: 32,
  receive_address: 128,
  block_transaction_id: 255,
}

export function cursorOf(order: Position): string {
  return Buffer.from(`${order.createdAt}.${order.id}`).toString('base64url')
}

export function readCursor(cursor: string | null | undefined): Position | null {
  if (!cursor) return null
  const match = /^(\d{1,16})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString())
  return match ? { createdAt: Number(match[1]), id: Number(match[2]) } : null
}

function newestFirst(a: Order, b: Order) {
  return b.createdAt - a.createdAt || b.id - a.id
}

/**
 * The console's order list: filters, exact search and keyset pagination
 * on (created_at DESC, id DESC), so that page 20,000 costs what page 1
 * costs. Every query walks one index of
 * database/migrations/1763700000070_console_order_indexes.ts in list
 * order and stops after a page.
 */
export class OrderSearch {
  async page(filters: OrderFilters, request: OrderPageRequest = {}): Promise<OrderPage> {
    const limit = Math.min(
      Math.max(Math.trunc(request.limit ?? ORDER_PAGE_SIZE), 1),
      MAX_ORDER_PAGE
    )
    const after = readCursor(request.after)
    const before = after ? null : readCursor(request.before)

    if (before) {
      const newer = await this.#fetch(filters, { from: before, direction: 'newer' }, limit + 1)
      // Back at the newest orders: that is the first page (full, even if orders came in since).
      if (newer.length <= limit) return this.page(filters, { limit })
      const orders = newer.slice(0, limit).reverse()
      return { orders, next: cursorOf(orders[orders.length - 1]), previous: cursorOf(orders[0]) }
    }

    const older = await this.#fetch(
      filters,
      after ? { from: after, direction: 'older' } : null,
      limit + 1
    )
    const orders = older.slice(0, limit)
    return {
      orders,
      next: older.length > limit ? cursorOf(orders[orders.length - 1]) : null,
      previous: after && orders.length > 0 ? cursorOf(orders[0]) : null,
    }
  }

  /** Every matching order, newest first, in batches of `size` (one keyset query each). */
  async *batches(filters: OrderFilters, size = MAX_ORDER_PAGE): AsyncGenerator<Order[]> {
    const batch = Math.min(Math.max(Math.trunc(size), 1), MAX_ORDER_PAGE)
    let from: Position | null = null
    for (;;) {
      const orders = await this.#fetch(filters, from ? { from, direction: 'older' } : null, batch)
      if (orders.length > 0) yield orders
      if (orders.length < batch) return
      from = orders[orders.length - 1]
    }
  }

  /** Up to `limit` orders from `position` in its direction (newest first without one). */
  async #fetch(
    filters: OrderFilters,
    position: { from: Position; direction: Direction } | null,
    limit: number
  ): Promise<Order[]> {
    const direction = position?.direction ?? 'older'
    const queries = this.#queries(filters, position, direction, limit)
    if (queries.length === 1) return await queries[0]
    // One query per way the search term can match, each on its own index, merged.
    const found = new Map<number, Order>()
    for (const query of queries) {
      for (const order of await query) found.set(order.id, order)
    }
    const merged = [...found.values()].sort(newestFirst)
    if (direction === 'newer') merged.reverse()
    return merged.slice(0, limit)
  }

  /**
   * The SQL of the first page of `filters` (one statement per way the
   * search term can match), for EXPLAIN in the bench and the tests.
   */
  statements(
    filters: OrderFilters,
    request: OrderPageRequest = {}
  ): { sql: string; bindings: unknown[] }[] {
    const limit = Math.min(
      Math.max(Math.trunc(request.limit ?? ORDER_PAGE_SIZE), 1),
      MAX_ORDER_PAGE
    )
    const after = readCursor(request.after)
    const position = after ? { from: after, direction: 'older' as const } : null
    return this.#queries(filters, position, 'older', limit + 1).map((query) => {
      const { sql, bindings } = query.toSQL()
      return { sql, bindings: [...bindings] }
    })
  }

  #queries(
    filters: OrderFilters,
    position: { from: Position } | null,
    direction: Direction,
    limit: number
  ): ModelQueryBuilderContract<typeof Order, Order>[] {
    const matches = this.#matches(filters.search)
    if (matches === null) return [this.#query(filters, position, direction, limit, null)]
    return matches.map((match) => this.#query(filters, position, direction, limit, match))
  }

  #query(
    filters: OrderFilters,
    position: { from: Position } | null,
    direction: Direction,
    limit: number,
    match: Match | null
  ): ModelQueryBuilderContract<typeof Order, Order> {
    const query = Order.query()
    const equalities = this.#equalities(filters)
    // PostgreSQL picks the index for several filters from its statistics.
    // SQLite has none (an installation never runs ANALYZE): with two
    // usable indexes it may walk the common value's (e.g. all expired
    // orders to find one address's). So there one index drives, the most
    // selective by nature (the search term, then pid, network, token,
    // payment type, status), and the other filters are marked `+column`,
    // SQLite's way of keeping a condition off the index choice.
    const driver = match ? match.column : equalities[0]?.[0]
    const sqlite = query.client.dialect.name !== 'postgres'
    for (const [column, value] of equalities) {
      if (sqlite && column !== driver) query.whereRaw('+?? = ?', [column, value])
      else query.where(column, value)
    }
    if (filters.createdFrom !== undefined) query.where('created_at', '>=', filters.createdFrom)
    if (filters.createdUntil !== undefined) query.where('created_at', '<', filters.createdUntil)
    if (match) {
      query.where(match.column, match.value)
      // The partial index's own condition, word for word (not a bound
      // parameter): only then does SQLite see that the index applies.
      if (match.column === 'block_transaction_id') query.whereRaw("block_transaction_id <> ''")
    }
    if (position) {
      // The plain bound on created_at is what the index range uses; the
      // OR only orders the rows of the cursor's own millisecond.
      const { createdAt, id } = position.from
      if (direction === 'older') {
        query
          .where('created_at', '<=', createdAt)
          .where((same) => same.where('created_at', '<', createdAt).orWhere('id', '<', id))
      } else {
        query
          .where('created_at', '>=', createdAt)
          .where((same) => same.where('created_at', '>', createdAt).orWhere('id', '>', id))
      }
    }
    const order = direction === 'older' ? 'desc' : 'asc'
    return query.orderBy('created_at', order).orderBy('id', order).limit(limit)
  }

  /** The equality filters given, the most selective kind first. */
  #equalities(filters: OrderFilters): [string, string | number][] {
    const all: [string, string | number | undefined][] = [
      ['pid', filters.pid || undefined],
      ['network', filters.network || undefined],
      ['token', filters.token || undefined],
      ['payment_type', filters.paymentType || undefined],
      ['status', filters.status],
    ]
    return all.filter((entry): entry is [string, string | number] => entry[1] !== undefined)
  }

  /** How the search term can match; null without a term, [] when it cannot match anything. */
  #matches(search: string | undefined): Match[] | null {
    const term = (search ?? '').trim()
    if (term === '') return null
    const matches: Match[] = [
      { column: 'trade_id', value: term },
      { column: 'order_id', value: term },
    ]
    const addresses = new Set([term])
    for (const name of chainRegistry.names()) {
      try {
        addresses.add(chainRegistry.family(name).normalizeAddress(term))
      } catch {
        // not an address of this family
      }
    }
    for (const address of addresses) matches.push({ column: 'receive_address', value: address })
    const references = new Set([term])
    if (/^(0x)?[0-9a-fA-F]+$/.test(term)) references.add(term.toLowerCase())
    for (const reference of references)
      matches.push({ column: 'block_transaction_id', value: reference })
    return matches.filter((match) => match.value.length <= WIDTH[match.column])
  }
}

const orderSearch = new OrderSearch()
export default orderSearch
