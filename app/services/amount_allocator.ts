import db from '@adonisjs/lucid/services/db'
import type { QueryClientContract, TransactionClientContract } from '@adonisjs/lucid/types/database'
import BusinessError from '#exceptions/business_error'
import { ErrorCode } from '#exceptions/error_codes'
import Chain from '#models/chain'
import { OrderStatus } from '#models/order'
import settings from '#settings/settings_service'
import { type Decimal, stepOf, toDecimalString } from '#support/text/money'
import { insertUnlessPresent } from '#support/database/insert_unless_present'
import { isKeptExactly } from '#support/text/money'
import { refuseInexactAmount } from '#services/exact_amount'
import { pgStatements, sqliteWriter } from '#services/prepared_statements'
import { metrics } from '#support/runtime/metrics'
import { StatementBatcher } from '#support/database/statement_batcher'
import { isDatabaseUnavailable } from '#support/database/database_unavailable'

export type AllocationRequest = {
  orderId: number
  network: string
  token: string
  addresses: string[]
  /** Wanted amount, already rounded to `precision`. */
  baseAmount: Decimal
  precision: number
  maxSteps: number
  /**
   * The chain's reservation grace (reservationGraceMs), read by the caller
   * before its transaction: on SQLite a settings read inside it would wait
   * for the one connection the transaction holds.
   */
  graceMs: number
  /** End of the order's life: the reservation outlives it by the chain's grace. */
  expiresAt: number
}

export type Allocation = { address: string; amount: string }

/**
 * A new order's columns (snake_case, as stored) but its target: the
 * allocator adds receive_address and actual_amount and writes the row once.
 */
export type OrderColumns = Record<string, string | number>

/** What the order insert reads back: the target chosen, and the id SQLite's lock insert takes (a list, not *: a column added later must not change a prepared statement's result). */
const CREATED_RETURNING = 'RETURNING id, receive_address, actual_amount'

/** Candidates offered to one statement: enough to skip a few taken pairs, few enough to stay cheap. */
const CANDIDATES_PER_ATTEMPT = 64

/**
 * PostgreSQL creates: statements out at a time (creates arriving while
 * they are out go together in the next one), and creates per statement.
 * A batch of 8 creates cost PostgreSQL less than half the CPU of 8 single
 * statements (measured: about 115 µs a create against 250). One slot was a
 * little faster still on a 2-core machine; two keep one statement waiting
 * on a row lock (another process's create of the same pair) from stopping
 * every create of the process.
 */
const PG_CREATE_SLOTS = 2
const PG_CREATE_BATCH = 32

/** One create attempt on PostgreSQL: the order's columns, its lock's, and the pairs offered in order of preference. */
type PgCreateJob = {
  order: OrderColumns
  network: string
  token: string
  expiresAt: number
  createdAt: number
  offered: Allocation[]
}

/**
 * Whether a failed batch of creates is sent again one create at a time: it
 * failed on something one of its creates did (a repeated order number, a
 * deadlock with another batch), not because the database is out of reach.
 */
function retryCreatesAlone(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !isDatabaseUnavailable(error)
}

/** The pairs one allocation may take, in the order they are preferred. */
type Candidates = {
  list: Allocation[]
  /** First amount refused for its digits (the list stops before it), if any. */
  inexact: string | null
}

type Range = { token: string; addresses: string[]; lowest: string; highest: string }

/** The target an order insert read back (RETURNING). */
function chosenTarget(row: Record<string, unknown>): Allocation {
  return {
    address: String(row.receive_address),
    amount: toDecimalString(row.actual_amount as string | number),
  }
}

/** The amounts a request may take, on its wallets: the wanted amount up to maxSteps − 1 steps more. */
function rangeOf(request: Omit<AllocationRequest, 'orderId'>): Range {
  return {
    token: request.token,
    addresses: request.addresses,
    lowest: toDecimalString(request.baseAmount),
    highest: toDecimalString(
      request.baseAmount.plus(stepOf(request.precision).multipliedBy(request.maxSteps - 1))
    ),
  }
}

/**
 * How long a reservation outlives its order on `chain`: long enough for a
 * transfer made in the order's last second to be confirmed (confirmations ×
 * block time), seen by the next scan (scan interval), plus the operator's
 * margin for slow wallets, congested mempools and lagging indexes.
 */
export async function reservationGraceMs(
  chain: Pick<Chain, 'confirmations' | 'blockTimeMs' | 'scanIntervalSeconds'>
) {
  const margin = await settings.get('order.late_payment_margin_seconds')
  return chain.confirmations * chain.blockTimeMs + chain.scanIntervalSeconds * 1000 + margin * 1000
}

/**
 * Reserves a unique (address, amount) pair for a waiting order, so that an
 * incoming transfer identifies exactly one order.
 *
 * The wanted amount is tried on every enabled wallet; when it is taken on
 * all of them, one step (10^-precision) is added, up to `maxSteps` amounts,
 * then 10005. Uniqueness is the database's: the unique index on the locks
 * decides, through INSERT … ON CONFLICT DO NOTHING, so concurrent requests in
 * any number of processes never share a pair. The read of the already-taken
 * pairs only spares attempts that would certainly conflict.
 *
 * A lock is NOT removed when its order expires or is closed: it stays until
 * the order's end of life (`expires_at`) plus the chain's grace, so a payer
 * who pays at the last second can never pay a newer order that was handed
 * the same amount on the same address. Only a paid order's lock goes at once
 * (its transfer has been found). Reservations past their grace are reclaimed
 * by the expiry job, and on the spot by an allocation that finds no free pair.
 */
export class AmountAllocator {
  async allocate(trx: TransactionClientContract, request: AllocationRequest): Promise<Allocation> {
    const range = rangeOf(request)
    const found = await this.#tryAllocate(trx, request, range)
    if (found) return found
    if ((await this.#reclaim(trx, request.network, Date.now() - request.graceMs, range)) > 0) {
      const retried = await this.#tryAllocate(trx, request, range)
      if (retried) return retried
    }
    throw new BusinessError(
      ErrorCode.NO_AMOUNT_CHANNEL,
      `No available amount channel: ${request.maxSteps} amounts from ${toDecimalString(request.baseAmount)} ${request.token} are all reserved on every ${request.network} wallet (waiting orders, or orders ended less than the late-payment grace ago)`
    )
  }

  /** The create statements' texts, by database, candidate count and order column list: built once each. */
  #createSql = new Map<string, string>()

  /** Spreads consecutive orders of this process over the wallets. */
  #rotation = Math.floor(Math.random() * 1_000_000)

  /**
   * Creates a waiting order with its unique (address, amount) in one go:
   * the order row is written once, whole, together with its lock, and
   * nothing is read first in the usual case (the first free candidate is
   * chosen by the statement itself).
   *
   * - PostgreSQL: one statement (a data-modifying CTE): pick the first
   *   candidate without a lock, insert its lock (ON CONFLICT DO NOTHING,
   *   with the order id drawn from the orders sequence), insert the order
   *   from the lock's row. The foreign key is checked at the end of the
   *   statement, when both rows exist. A lost race inserts nothing.
   *   Creates that arrive while PG_CREATE_SLOTS statements are out go
   *   together in the next one (#pgBatchSql, StatementBatcher): one
   *   transaction for all, each create its own pick, lock and order; if it
   *   fails whole (a repeated order number) its creates are sent again
   *   alone, each getting its own answer.
   * - SQLite: BEGIN IMMEDIATE, INSERT the order choosing the first free
   *   candidate (RETURNING the row), INSERT its lock, COMMIT, run on the
   *   writer thread (sqlite_writer.ts), which commits the writes that
   *   arrive together in one transaction. The write lock is held from
   *   BEGIN IMMEDIATE, so nothing can take the pair between the two inserts.
   *
   * First offered: the wanted amount on every wallet. When the offered
   * candidates are all taken (or a race was lost) the taken pairs of the
   * range are read (an index range read) and the free ones offered; then
   * expired reservations are reclaimed once; then 10005 (10004 when the
   * next free amount would need more digits than are kept exactly).
   * A duplicate (pid, order_id) fails the insert itself (unique violation):
   * nothing is written, the caller answers 10002.
   */
  async createOrder(
    order: OrderColumns,
    request: Omit<AllocationRequest, 'orderId'>
  ): Promise<Allocation> {
    const offset = this.#rotation++ % request.addresses.length
    const addresses = [...request.addresses.slice(offset), ...request.addresses.slice(0, offset)]
    const wanted = toDecimalString(request.baseAmount)
    if (isKeptExactly(wanted)) {
      const created = await this.#attempt(
        order,
        request,
        addresses.map((address) => ({ address, amount: wanted }))
      )
      if (created) return created
      metrics.amountAllocationRetries.inc({ network: request.network, token: request.token })
    }

    const candidates = this.#candidates(request, addresses)
    const range = rangeOf(request)
    for (let reclaimed = false; ; reclaimed = true) {
      for (;;) {
        const taken = await this.#taken(db.connection(), request.network, range)
        const free = candidates.list.filter(
          (candidate) => !taken.has(`${candidate.address}|${candidate.amount}`)
        )
        if (free.length === 0) break
        const created = await this.#attempt(order, request, free.slice(0, CANDIDATES_PER_ATTEMPT))
        if (created) return created
        metrics.amountAllocationRetries.inc({ network: request.network, token: request.token })
      }
      if (reclaimed) break
      if (
        (await this.#reclaim(
          db.connection(),
          request.network,
          Date.now() - request.graceMs,
          range
        )) === 0
      )
        break
    }
    if (candidates.inexact !== null)
      refuseInexactAmount(candidates.inexact, {
        amount: String(order.amount),
        currency: String(order.currency),
        token: request.token,
      })
    throw new BusinessError(
      ErrorCode.NO_AMOUNT_CHANNEL,
      `No available amount channel: ${request.maxSteps} amounts from ${toDecimalString(request.baseAmount)} ${request.token} are all reserved on every ${request.network} wallet (waiting orders, or orders ended less than the late-payment grace ago)`
    )
  }

  /** Every pair the request may take: the wanted amount on each wallet, then one step more, … */
  #candidates(request: Omit<AllocationRequest, 'orderId'>, addresses: string[]): Candidates {
    const step = stepOf(request.precision)
    const list: Allocation[] = []
    for (let index = 0; index < request.maxSteps; index++) {
      const amount = toDecimalString(request.baseAmount.plus(step.multipliedBy(index)))
      // A step above the wanted amount may need a digit more (1000000000 → 1000000000.000001).
      if (!isKeptExactly(amount)) return { list, inexact: amount }
      for (const address of addresses) list.push({ address, amount })
    }
    return { list, inexact: null }
  }

  /**
   * SQLite: the candidates (one VALUES row each) and the first free one.
   *
   * Each candidate row carries its network and token, so the probe of
   * amount_locks compares the index's columns with the candidates' columns
   * only, never with a bound parameter. SQLite (built with STAT4 by
   * better-sqlite3) marks a statement with a `column = ?` term on an
   * analysed index for re-preparation whenever that parameter is bound
   * anew: after an ANALYZE every create re-planned this cached statement
   * (measured: the insert 3× slower, about 30 % fewer creates per second).
   */
  #sqlitePickSql(count: number) {
    const rows = Array.from({ length: count }, () => '(?, ?, ?, ?, ?)')
    return `candidates(ord, network, token, address, amount) AS (VALUES ${rows.join(', ')}),
      pick AS (
        SELECT candidates.address, candidates.amount FROM candidates
        WHERE NOT EXISTS (
          SELECT 1 FROM amount_locks l
          WHERE l.network = candidates.network AND l.token = candidates.token
            AND l.address = candidates.address AND l.amount = candidates.amount
        )
        ORDER BY candidates.ord LIMIT 1
      )`
  }

  /**
   * PostgreSQL: the same with the candidates as two array parameters
   * (addresses, amounts), unnested in order: one statement text whatever
   * their number, and a Bind message a fraction of the size of one
   * parameter per value (measured: the socket write of the Bind was a third
   * of the create's CPU time). Bindings: network, token, addresses, amounts.
   * As on SQLite the probe compares with the candidates' columns only; it is
   * one lookup of the unique index per candidate, whatever the statistics
   * say (OFFSET keeps the subquery from becoming an anti-join that may hash
   * the whole table).
   */
  #pgPickSql() {
    return `candidates AS (
        SELECT ?::varchar AS network, ?::varchar AS token, c.address, c.amount, c.ord
        FROM unnest(?::varchar[], ?::numeric[]) WITH ORDINALITY AS c(address, amount, ord)
      ),
      pick AS (
        SELECT candidates.address, candidates.amount FROM candidates
        WHERE NOT EXISTS (
          SELECT 1 FROM amount_locks l
          WHERE l.network = candidates.network AND l.token = candidates.token
            AND l.address = candidates.address AND l.amount = candidates.amount OFFSET 0
        )
        ORDER BY candidates.ord LIMIT 1
      )`
  }

  /**
   * PostgreSQL, several creates in one statement (StatementBatcher): the
   * same steps as the single statement, per create. Binding: one JSON
   * array, an element per create: `order` (its columns, read into a row of
   * the orders table, so each value takes its column's type), `network`,
   * `token`, `expires_at`, `created_at` (its lock's), `addresses` and
   * `amounts` (its candidates, in order of preference).
   *
   * - Each create's first free candidate is picked by a LIMIT 1 probe of
   *   its own candidates, in order (one index lookup when the first is free).
   * - The order id is drawn with the pick, so lock and order meet on it.
   * - Two creates of the batch that picked the same pair: the unique index
   *   keeps the first lock (ON CONFLICT DO NOTHING), the other create gets
   *   no row and goes on like a lost race. Locks are inserted in index
   *   order, so two batches waiting on each other's pairs wait in the same
   *   order (no deadlock between batches over pairs).
   * - The answer names each order by trade_id (unique), the caller's key.
   */
  #pgBatchSql(columns: string[]) {
    return `WITH r AS MATERIALIZED (
        SELECT e.req, e.doc, o.*
        FROM jsonb_array_elements(?::jsonb) WITH ORDINALITY AS e(doc, req)
        CROSS JOIN LATERAL jsonb_populate_record(NULL::orders, e.doc -> 'order') AS o
      ),
      pick AS MATERIALIZED (
        SELECT r.req, nextval(pg_get_serial_sequence('orders', 'id')) AS id, p.address, p.amount
        FROM r CROSS JOIN LATERAL (
          SELECT c.address, c.amount::numeric AS amount
          FROM ROWS FROM (jsonb_array_elements_text(r.doc -> 'addresses'), jsonb_array_elements_text(r.doc -> 'amounts'))
            WITH ORDINALITY AS c(address, amount, ord)
          WHERE NOT EXISTS (
            SELECT 1 FROM amount_locks l
            WHERE l.network = r.doc ->> 'network' AND l.token = r.doc ->> 'token'
              AND l.address = c.address AND l.amount = c.amount::numeric OFFSET 0
          )
          ORDER BY c.ord LIMIT 1
        ) p
      ),
      lock AS (
        INSERT INTO amount_locks (network, address, token, amount, order_id, expires_at, created_at)
        SELECT r.doc ->> 'network', pick.address, r.doc ->> 'token', pick.amount, pick.id,
          (r.doc ->> 'expires_at')::bigint, (r.doc ->> 'created_at')::bigint
        FROM pick JOIN r ON r.req = pick.req
        ORDER BY 1, 2, 3, 4
        ON CONFLICT DO NOTHING
        RETURNING order_id
      )
      INSERT INTO orders (id, ${columns.join(', ')}, receive_address, actual_amount)
      SELECT pick.id, ${columns.map((column) => `r.${column}`).join(', ')}, pick.address, pick.amount
      FROM lock JOIN pick ON pick.id = lock.order_id JOIN r ON r.req = pick.req
      RETURNING id, trade_id, receive_address, actual_amount`
  }

  /** A create statement's text: PostgreSQL (whatever the candidate count, given as 0), SQLite for `count` candidates. */
  #createSqlFor(kind: 'pg' | 'sqlite', count: number, columns: string[]): string {
    const key = `${kind}|${count}|${columns.join(',')}`
    let sql = this.#createSql.get(key)
    if (sql) return sql
    const orderList = columns.join(', ')
    const orderPlaceholders = columns.map(() => '?').join(', ')
    if (kind === 'pg')
      sql = `WITH ${this.#pgPickSql()},
        lock AS (
          INSERT INTO amount_locks (network, address, token, amount, order_id, expires_at, created_at)
          SELECT ?, pick.address, ?, pick.amount, nextval(pg_get_serial_sequence('orders', 'id')), ?, ? FROM pick
          ON CONFLICT DO NOTHING
          RETURNING order_id, address, amount
        )
        INSERT INTO orders (id, ${orderList}, receive_address, actual_amount)
        SELECT lock.order_id, ${orderPlaceholders}, lock.address, lock.amount FROM lock
        ${CREATED_RETURNING}`
    else
      sql = `WITH ${this.#sqlitePickSql(count)}
        INSERT INTO orders (${orderList}, receive_address, actual_amount)
        SELECT ${orderPlaceholders}, pick.address, pick.amount FROM pick
        ${CREATED_RETURNING}`
    // Few keys: one column list, and candidate counts from 1 to CANDIDATES_PER_ATTEMPT.
    if (this.#createSql.size >= 256) this.#createSql.clear()
    this.#createSql.set(key, sql)
    return sql
  }

  /** PostgreSQL creates, batched when they come faster than the database answers; one batcher per order column list (one in practice). */
  #pgCreates = new Map<string, StatementBatcher<PgCreateJob, Allocation | null>>()

  /** PostgreSQL creates waiting for a statement slot (what tests poll). */
  get queuedCreates(): number {
    let queued = 0
    for (const batcher of this.#pgCreates.values()) queued += batcher.queued
    return queued
  }

  #pgBatcherFor(columns: string[]) {
    const key = columns.join(',')
    let batcher = this.#pgCreates.get(key)
    if (!batcher) {
      // Both statement texts are built once, with the batcher of their column list.
      const single = this.#createSqlFor('pg', 0, columns)
      const batched = this.#pgBatchSql(columns)
      batcher = new StatementBatcher<PgCreateJob, Allocation | null>({
        maxInFlight: PG_CREATE_SLOTS,
        maxBatch: PG_CREATE_BATCH,
        one: (job) => this.#pgCreateOne(single, columns, job),
        many: (jobs) => this.#pgCreateMany(batched, jobs),
        retryAlone: retryCreatesAlone,
      })
      this.#pgCreates.set(key, batcher)
    }
    return batcher
  }

  async #pgCreateOne(sql: string, columns: string[], job: PgCreateJob): Promise<Allocation | null> {
    const rows = await pgStatements.query(sql, [
      job.network,
      job.token,
      job.offered.map((candidate) => candidate.address),
      job.offered.map((candidate) => candidate.amount),
      job.network,
      job.token,
      job.expiresAt,
      job.createdAt,
      ...columns.map((column) => job.order[column]),
    ])
    return rows.length > 0 ? chosenTarget(rows[0]) : null
  }

  async #pgCreateMany(sql: string, jobs: PgCreateJob[]): Promise<(Allocation | null)[]> {
    const batch = jobs.map((job) => ({
      order: job.order,
      network: job.network,
      token: job.token,
      expires_at: job.expiresAt,
      created_at: job.createdAt,
      addresses: job.offered.map((candidate) => candidate.address),
      amounts: job.offered.map((candidate) => candidate.amount),
    }))
    const rows = await pgStatements.query(sql, [JSON.stringify(batch)])
    const byTradeId = new Map(rows.map((row) => [String(row.trade_id), row]))
    return jobs.map((job) => {
      const row = byTradeId.get(String(job.order.trade_id))
      return row ? chosenTarget(row) : null
    })
  }

  async #attempt(
    order: OrderColumns,
    request: Omit<AllocationRequest, 'orderId'>,
    offered: Allocation[]
  ): Promise<Allocation | null> {
    const columns = Object.keys(order)
    const now = Date.now()
    if (db.connection().dialect.name === 'postgres') {
      if (order.trade_id === undefined)
        throw new TypeError(
          'a created order needs its trade_id (the batched create names its rows by it)'
        )
      return this.#pgBatcherFor(columns).run({
        order,
        network: request.network,
        token: request.token,
        expiresAt: request.expiresAt,
        createdAt: now,
        offered,
      })
    }

    const orderValues = columns.map((column) => order[column])
    const sql = this.#createSqlFor('sqlite', offered.length, columns)
    const pickValues: (string | number)[] = []
    offered.forEach((candidate, index) =>
      pickValues.push(index, request.network, request.token, candidate.address, candidate.amount)
    )
    const row = await sqliteWriter.write(
      { sql, bindings: [...pickValues, ...orderValues] },
      {
        sql: 'INSERT INTO amount_locks (network, address, token, amount, order_id, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        bindings: [
          request.network,
          { fromRow: 'receive_address' },
          request.token,
          { fromRow: 'actual_amount' },
          { fromRow: 'id' },
          request.expiresAt,
          now,
        ],
      }
    )
    return row ? chosenTarget(row) : null
  }

  /** The pairs of `range` already reserved, as `address|amount`. */
  async #taken(client: QueryClientContract, network: string, range: Range): Promise<Set<string>> {
    const takenRows: { address: string; amount: string | number }[] = await client
      .from('amount_locks')
      .where('network', network)
      .where('token', range.token)
      .whereIn('address', range.addresses)
      .where('amount', '>=', range.lowest)
      .where('amount', '<=', range.highest)
      .select('address', 'amount')
    return new Set(takenRows.map((row) => `${row.address}|${toDecimalString(row.amount)}`))
  }

  async #tryAllocate(
    trx: TransactionClientContract,
    request: AllocationRequest,
    range: Range
  ): Promise<Allocation | null> {
    const step = stepOf(request.precision)
    const taken = await this.#taken(trx, request.network, range)

    // Start at a different wallet each time to spread orders over wallets.
    const offset = request.orderId % request.addresses.length
    const addresses = [...request.addresses.slice(offset), ...request.addresses.slice(0, offset)]

    for (let index = 0; index < request.maxSteps; index++) {
      const amount = toDecimalString(request.baseAmount.plus(step.multipliedBy(index)))
      for (const address of addresses) {
        if (taken.has(`${address}|${amount}`)) continue
        const { inserted } = await insertUnlessPresent(
          trx,
          'amount_locks',
          {
            network: request.network,
            address,
            token: request.token,
            amount,
            order_id: request.orderId,
            expires_at: request.expiresAt,
            created_at: Date.now(),
          },
          ['network', 'address', 'token', 'amount']
        )
        if (inserted) return { address, amount }
      }
    }
    return null
  }

  /** A paid order's lock goes at once (a no-op for orders without one). */
  async release(client: TransactionClientContract, orderIds: number | number[]) {
    const ids = Array.isArray(orderIds) ? orderIds : [orderIds]
    if (ids.length > 0) await client.from('amount_locks').whereIn('order_id', ids).delete()
  }

  /**
   * A closed order's life ends now: its reservation counts its grace from
   * `at` instead of the expiration the order was created with.
   */
  async endLife(client: TransactionClientContract, orderIds: number[], at: number) {
    if (orderIds.length > 0) {
      await client
        .from('amount_locks')
        .whereIn('order_id', orderIds)
        .where('expires_at', '>', at)
        .update({ expires_at: at })
    }
  }

  /**
   * Deletes the reservations whose grace has passed on every chain; returns
   * how many. Run by the expiry job.
   */
  async reclaimExpired(now = Date.now()): Promise<number> {
    const networks: { network: string }[] = await db.from('amount_locks').distinct('network')
    let total = 0
    for (const { network } of networks) {
      // a network removed from the chains table keeps its locks (no grace can be computed)
      const chain = await Chain.findBy('network', network)
      if (chain)
        total += await this.#reclaim(
          db.connection(),
          network,
          now - (await reservationGraceMs(chain))
        )
    }
    return total
  }

  /**
   * Deletes the locks of `network` whose order's life ended before
   * `cutoff` (now − grace). Only locks of expired (3) orders are reclaimed:
   * an order still shown as waiting keeps its amount whatever the clock says.
   */
  async #reclaim(
    client: QueryClientContract,
    network: string,
    cutoff: number,
    range?: Range
  ): Promise<number> {
    const query = client
      .from('amount_locks')
      .where('network', network)
      .where('expires_at', '<', cutoff)
      .whereExists((orders) =>
        orders
          .from('orders')
          .whereColumn('orders.id', 'amount_locks.order_id')
          .where('orders.status', OrderStatus.EXPIRED)
          .select(client.raw('1'))
      )
    if (range) {
      query
        .where('token', range.token)
        .whereIn('address', range.addresses)
        .where('amount', '>=', range.lowest)
        .where('amount', '<=', range.highest)
    }
    const deleted = await query.delete()
    return Number(Array.isArray(deleted) ? deleted.length : deleted)
  }
}

const amountAllocator = new AmountAllocator()
export default amountAllocator
