import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type { ApiClient } from '@japa/api-client'
import type { TransactionClientContract } from '@adonisjs/lucid/types/database'
import settings from '#settings/settings_service'
import amountAllocator from '#services/amount_allocator'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { TRON_WALLET, TRON_WALLET_2, createOrder, orderParams } from '#tests/helpers/merchant'
import { waitFor } from '#tests/helpers/ops'

/** Which database this run is on (bin/test.ts: DB_CONNECTION, SQLite by default). */
const onPostgres = process.env.DB_CONNECTION === 'pg'
const ONLY_PG =
  'PostgreSQL only (SQLite batches its creates on its writer thread: sqlite_writer.spec.ts)'

type Sent = { sql: string; bindings: unknown[] }

/**
 * The creates go out (two statement slots); while amount_locks is locked by
 * another transaction the two lone statements wait on it, and every create
 * after them queues for a slot. Returns the pending answers once `queued`
 * creates wait, and the statements sent meanwhile.
 */
async function createBehindLockedTable(
  client: ApiClient,
  holder: TransactionClientContract,
  params: Record<string, unknown>[],
  queued: number
) {
  // A first create loads the configuration cache and stamps the key's last_used_at.
  ;(await createOrder(client, orderParams({ order_id: 'warm', amount: 1 }))).assertStatus(200)
  await db.from('amount_locks').delete()
  await db.from('orders').delete()

  const sent: Sent[] = []
  const knex = db.connection().getWriteClient()
  const listener = (query: Sent) => sent.push(query)
  knex.on('query', listener)
  await holder.rawQuery('LOCK TABLE amount_locks IN SHARE ROW EXCLUSIVE MODE')
  const answers = params.map((one) => Promise.resolve(createOrder(client, one)))
  await waitFor(
    () => amountAllocator.queuedCreates === queued,
    `${queued} creates queued for a statement slot`
  )
  return { answers, sent, stop: () => knex.off('query', listener) }
}

const isBatch = (query: Sent) => /jsonb_array_elements/.test(query.sql)
const isLoneCreate = (query: Sent) => /insert into orders/i.test(query.sql) && !isBatch(query)

/** Every order has its lock, on the same pair and under its id; no lock without its order. */
async function assertOrdersMatchTheirLocks(assert: any) {
  const orders = await db.from('orders').select('id', 'receive_address', 'actual_amount')
  const locks = await db.from('amount_locks').select('order_id', 'address', 'amount')
  assert.equal(locks.length, orders.length)
  const lockOf = new Map(locks.map((lock) => [Number(lock.order_id), lock]))
  for (const order of orders) {
    const lock = lockOf.get(Number(order.id))
    assert.exists(lock, `order ${order.id} has no lock`)
    assert.equal(lock!.address, order.receive_address)
    assert.equal(Number(lock!.amount), Number(order.actual_amount))
  }
}

/**
 * The test's own watching and terminating go through a connection of their
 * own: the pool's idle connections may be the very ones terminated, not
 * yet found dead (a query on one fails with "Connection terminated").
 */
const WATCHER = 'pg_watcher'
async function watch(sql: string, bindings: (string | number[])[]) {
  if (!db.manager.has(WATCHER)) {
    db.manager.add(WATCHER, { ...db.manager.get('pg')!.config, pool: { min: 0, max: 1 } })
  }
  return db.connection(WATCHER).rawQuery(sql, bindings)
}

async function waitingBackends(pattern: string): Promise<number[]> {
  const result = await watch(
    `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE ?`,
    [pattern]
  )
  return result.rows.map((row: { pid: number }) => row.pid)
}

async function terminate(pids: number[]) {
  await watch(`SELECT pg_terminate_backend(pid) FROM unnest(?::int[]) AS pid`, [pids])
}

test.group('PostgreSQL: creates batched while the database is busy', (group) => {
  let holder: TransactionClientContract | null = null

  group.setup(() => async () => {
    if (db.manager.has(WATCHER)) await db.manager.close(WATCHER, true)
  })
  group.each.setup(async () => {
    if (!onPostgres) return async () => {}
    await resetDatabase()
    await settings.set('rate_limit.create_per_minute', '0')
    await makeTronPayable([TRON_WALLET, TRON_WALLET_2])
    holder = await db.transaction()
    return async () => {
      if (holder && !holder.isCompleted) await holder.rollback()
    }
  })

  test('ten creates queued behind the busy slots go out as one statement, each with its own pair', async ({
    client: testClient,
    assert,
  }) => {
    const params = Array.from({ length: 12 }, (_, index) =>
      orderParams({ order_id: `batch-${index}`, amount: 100 + index })
    )
    const { answers, sent, stop } = await createBehindLockedTable(testClient, holder!, params, 10)
    await holder!.rollback()
    const bodies = (await Promise.all(answers)).map((response) => response.body())
    stop()

    for (const body of bodies) assert.equal(body.status_code, 200, JSON.stringify(body))
    const batches = sent.filter(isBatch)
    assert.lengthOf(batches, 1, 'one statement for the ten queued creates')
    assert.lengthOf(JSON.parse(String(batches[0].bindings[0])), 10)
    assert.lengthOf(sent.filter(isLoneCreate), 2, 'the two that found a free slot went alone')

    // Each answer is its own row, and its lock.
    for (const body of bodies) {
      const row = await db.from('orders').where('trade_id', body.data.trade_id).firstOrFail()
      assert.equal(row.order_id, body.data.order_id)
      assert.equal(row.receive_address, body.data.receive_address)
      assert.equal(Number(row.actual_amount), body.data.actual_amount)
    }
    assert.equal(
      new Set(bodies.map((body) => `${body.data.receive_address}|${body.data.actual_amount}`)).size,
      12
    )
    assert.equal(await countRows('orders'), 12)
    await assertOrdersMatchTheirLocks(assert)
  }).skip(!onPostgres, ONLY_PG)

  test('creates of one amount in one batch: one takes the pair, the others step on; no pair twice, nothing half-written', async ({
    client: testClient,
    assert,
  }) => {
    // 72.5 CNY = 10 USDT for all twelve, on two wallets.
    const params = Array.from({ length: 12 }, (_, index) =>
      orderParams({ order_id: `same-${index}`, amount: 72.5 })
    )
    const { answers, sent, stop } = await createBehindLockedTable(testClient, holder!, params, 10)
    await holder!.rollback()
    const bodies = (await Promise.all(answers)).map((response) => response.body())
    stop()

    for (const body of bodies) assert.equal(body.status_code, 200, JSON.stringify(body))
    assert.isAtLeast(sent.filter(isBatch).length, 1)
    const pairs = bodies.map((body) => `${body.data.receive_address}|${body.data.actual_amount}`)
    assert.equal(new Set(pairs).size, 12)
    // Two wallets: 10.00 … 10.05 on each.
    assert.sameMembers(
      bodies.map((body) => body.data.actual_amount),
      [10, 10, 10.01, 10.01, 10.02, 10.02, 10.03, 10.03, 10.04, 10.04, 10.05, 10.05]
    )
    assert.equal(await countRows('orders'), 12)
    await assertOrdersMatchTheirLocks(assert)
  }).skip(!onPostgres, ONLY_PG)

  test('a repeated order number in a batch: the batch is undone and its creates sent alone; one 10002, the others created', async ({
    client: testClient,
    assert,
  }) => {
    const params = Array.from({ length: 12 }, (_, index) =>
      orderParams({
        order_id: index === 5 || index === 9 ? 'twice' : `dup-${index}`,
        amount: 100 + index,
      })
    )
    const { answers, sent, stop } = await createBehindLockedTable(testClient, holder!, params, 10)
    await holder!.rollback()
    const bodies = (await Promise.all(answers)).map((response) => response.body())
    stop()

    const codes = bodies.map((body) => body.status_code)
    assert.equal(codes.filter((code) => code === 200).length, 11, JSON.stringify(codes))
    assert.equal(codes.filter((code) => code === 10002).length, 1, JSON.stringify(codes))
    assert.include([codes[5], codes[9]], 10002)
    // The batch failed whole, then each of its ten went alone.
    assert.lengthOf(sent.filter(isBatch), 1)
    assert.lengthOf(sent.filter(isLoneCreate), 12)
    assert.equal(await countRows('orders'), 11)
    assert.equal(await countRows('orders', { order_id: 'twice' }), 1)
    await assertOrdersMatchTheirLocks(assert)
  }).skip(!onPostgres, ONLY_PG)

  test('a batch cut off from the database: each of its creates answers 503 at once, none is sent again', async ({
    client: testClient,
    assert,
  }) => {
    const params = Array.from({ length: 8 }, (_, index) =>
      orderParams({ order_id: `cut-${index}`, amount: 100 + index })
    )
    const { answers, sent, stop } = await createBehindLockedTable(testClient, holder!, params, 6)
    const settled: number[] = []
    answers.forEach((answer, index) => answer.then(() => settled.push(index)))

    // The two lone creates lose their connections (server terminated them) …
    let lone: number[] = []
    await waitFor(
      async () => (lone = await waitingBackends('%INSERT INTO orders%')).length === 2,
      'the lone creates waiting on the lock'
    )
    await terminate(lone)
    // … then the batch of the six others loses its own: it goes out on a connection the pool
    // has not yet found dead and fails at once, or on a new one and waits on the lock until it is
    // terminated too. Sent again alone, its creates would wait on the lock still held; they answer
    // now, all of them.
    await waitFor(
      async () => {
        if (settled.length === 8) return true
        const batch = await waitingBackends('%jsonb_array_elements%')
        if (batch.length > 0) await terminate(batch)
        return false
      },
      'every create answered while the lock is still held',
      30_000
    )
    await holder!.rollback()
    stop()

    for (const response of await Promise.all(answers)) {
      assert.equal(response.status(), 503, JSON.stringify(response.body()))
      assert.equal(response.header('retry-after'), '5')
    }
    assert.lengthOf(sent.filter(isBatch), 1)
    assert.lengthOf(sent.filter(isLoneCreate), 2)
    assert.equal(await countRows('orders'), 0)
    assert.equal(await countRows('amount_locks'), 0)
    // The pool replaces the lost connections: the next create goes through.
    ;(await createOrder(testClient, orderParams({ order_id: 'after', amount: 123 }))).assertStatus(
      200
    )
  }).skip(!onPostgres, ONLY_PG)
})
