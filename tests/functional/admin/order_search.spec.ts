import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import orderSearch, {
  cursorOf,
  type OrderFilters,
  type OrderPage,
} from '#services/admin/order_search'
import { resetDatabase } from '#tests/helpers/database'
import { insertOrders, type OrderRow } from '#tests/helpers/order_rows'

const BASE = 1_700_000_000_000
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'
const NETWORKS = ['tron', 'ethereum', 'bsc']

type Fixture = OrderRow & { id: number }

/** 60 orders, three per millisecond (ties broken by id), with every filtered column varied. */
function row(index: number): OrderRow {
  const paid = index % 4 === 1
  return {
    trade_id: `T${String(index).padStart(8, '0')}`,
    // T00000025 shares T00000005's number under another pid (see seed for T00000045).
    order_id: index === 25 ? 'ORD-5' : `ORD-${index}`,
    pid: index % 8 === 5 ? 'shop-b' : '1000',
    payment_type: index % 7 === 0 ? 'Compat' : 'Native',
    status: (index % 4) + 1,
    network: NETWORKS[index % 3],
    token: index % 2 === 0 ? 'USDT' : 'USDC',
    receive_address: index === 59 ? EVM_CANONICAL : index % 2 === 0 ? 'TAddrEven' : 'TAddrOdd',
    block_transaction_id: paid ? `0x${index.toString(16).padStart(64, 'a')}` : '',
    name: '',
    created_at: BASE + Math.floor(index / 3) * 1000,
  }
}

async function seed(): Promise<Fixture[]> {
  const rows = Array.from({ length: 60 }, (_, index) => row(index))
  const ids = await insertOrders(rows.length, (index) => rows[index])
  // T00000045 is T00000005's child: it repeats its parent's number.
  await db.from('orders').where('id', ids[45]).update({ parent_id: ids[5], order_id: 'ORD-5' })
  Object.assign(rows[45], { parent_id: ids[5], order_id: 'ORD-5' })
  return rows.map((entry, index) => ({ ...entry, id: ids[index] }))
}

/** What a filter should find, newest first, computed apart from the service. */
function expected(fixture: Fixture[], keep: (order: Fixture) => boolean) {
  return fixture
    .filter(keep)
    .sort((a, b) => b.created_at - a.created_at || b.id - a.id)
    .map((order) => order.trade_id)
}

async function allPages(filters: OrderFilters, limit: number) {
  const pages: OrderPage[] = []
  let page = await orderSearch.page(filters, { limit })
  pages.push(page)
  while (page.next) {
    page = await orderSearch.page(filters, { after: page.next, limit })
    pages.push(page)
    if (pages.length > 100) throw new Error('pagination does not end')
  }
  return pages
}

function tradeIds(page: OrderPage) {
  return page.orders.map((order) => order.tradeId)
}

test.group('Console order search: keyset pages', (group) => {
  let fixture: Fixture[] = []
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await seed()
  })

  test('the first page is the newest orders, ties in one millisecond ordered by id', async ({
    assert,
  }) => {
    const page = await orderSearch.page({}, { limit: 5 })
    assert.deepEqual(tradeIds(page), expected(fixture, () => true).slice(0, 5))
    assert.deepEqual(tradeIds(page), [
      'T00000059',
      'T00000058',
      'T00000057',
      'T00000056',
      'T00000055',
    ])
    assert.isNull(page.previous)
    assert.isString(page.next)
  })

  test('walking Next covers every order once, in order, across same-millisecond ties', async ({
    assert,
  }) => {
    // 7 per page cuts through the groups of three orders sharing a millisecond.
    const pages = await allPages({}, 7)
    assert.lengthOf(pages, 9)
    const walked = pages.flatMap(tradeIds)
    assert.deepEqual(
      walked,
      expected(fixture, () => true)
    )
    assert.equal(new Set(walked).size, 60)
    assert.isNull(pages.at(-1)!.next)
    assert.lengthOf(pages.at(-1)!.orders, 4)
  })

  test('walking Previous back from the last page gives the same pages', async ({ assert }) => {
    const forward = await allPages({ status: 2 }, 4)
    assert.isAbove(forward.length, 2)
    let page = forward.at(-1)!
    const backward = [tradeIds(page)]
    while (page.previous) {
      page = await orderSearch.page({ status: 2 }, { before: page.previous, limit: 4 })
      backward.unshift(tradeIds(page))
    }
    assert.deepEqual(backward, forward.map(tradeIds))
    assert.isNull(page.previous)
  })

  test('Previous back to the newest orders is a full first page, newer arrivals included', async ({
    assert,
  }) => {
    const first = await orderSearch.page({}, { limit: 10 })
    const second = await orderSearch.page({}, { after: first.next, limit: 10 })
    await insertOrders(3, (index) => ({
      ...row(0),
      trade_id: `NEW${index}`,
      order_id: `NEW-${index}`,
      created_at: BASE + 100_000 + index,
    }))
    // The ten just before page 2 (what was page 1); three newer ones exist now.
    const back = await orderSearch.page({}, { before: second.previous, limit: 10 })
    assert.deepEqual(tradeIds(back), tradeIds(first))
    assert.isString(back.previous)
    const top = await orderSearch.page({}, { before: back.previous, limit: 10 })
    assert.deepEqual(tradeIds(top), ['NEW2', 'NEW1', 'NEW0', ...tradeIds(first).slice(0, 7)])
    assert.isNull(top.previous)
    assert.isString(top.next)
  })

  test('a cursor is opaque and a forged one is ignored (first page)', async ({ assert }) => {
    const page = await orderSearch.page({}, { limit: 3 })
    assert.notInclude(page.next!, String(BASE))
    for (const forged of [
      'garbage',
      Buffer.from('1;drop table orders').toString('base64url'),
      '',
    ]) {
      const again = await orderSearch.page({}, { after: forged, limit: 3 })
      assert.deepEqual(tradeIds(again), tradeIds(page))
    }
  })

  test('a cursor past the oldest order gives an empty page, not an error', async ({ assert }) => {
    const page = await orderSearch.page({}, { after: cursorOf({ createdAt: BASE - 1, id: 1 }) })
    assert.deepEqual(page, { orders: [], next: null, previous: null })
  })
})

test.group('Console order search: filters', (group) => {
  let fixture: Fixture[] = []
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await seed()
  })

  const cases: [string, OrderFilters, (order: Fixture) => boolean][] = [
    ['status', { status: 3 }, (order) => order.status === 3],
    ['network', { network: 'bsc' }, (order) => order.network === 'bsc'],
    ['token', { token: 'USDC' }, (order) => order.token === 'USDC'],
    ['pid', { pid: 'shop-b' }, (order) => order.pid === 'shop-b'],
    ['payment type', { paymentType: 'Compat' }, (order) => order.payment_type === 'Compat'],
    [
      'created date range (from inclusive, until exclusive)',
      { createdFrom: BASE + 5000, createdUntil: BASE + 9000 },
      (order) => order.created_at >= BASE + 5000 && order.created_at < BASE + 9000,
    ],
    [
      'several at once',
      { status: 2, network: 'ethereum', token: 'USDC', createdFrom: BASE + 3000 },
      (order) =>
        order.status === 2 &&
        order.network === 'ethereum' &&
        order.token === 'USDC' &&
        order.created_at >= BASE + 3000,
    ],
  ]
  for (const [name, filters, keep] of cases) {
    test(`filter: ${name}, paged without duplicates or gaps`, async ({ assert }) => {
      const want = expected(fixture, keep)
      assert.isAbove(want.length, 0)
      assert.isBelow(want.length, 60)
      const walked = (await allPages(filters, 3)).flatMap(tradeIds)
      assert.deepEqual(walked, want)
    })
  }

  test('a value nobody has finds nothing', async ({ assert }) => {
    const page = await orderSearch.page({ network: 'solana' })
    assert.deepEqual(page, { orders: [], next: null, previous: null })
  })
})

test.group('Console order search: search (exact match)', (group) => {
  let fixture: Fixture[] = []
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await seed()
  })

  test('by trade_id; a prefix or a different case does not match', async ({ assert }) => {
    assert.deepEqual(tradeIds(await orderSearch.page({ search: '  T00000042 ' })), ['T00000042'])
    assert.lengthOf((await orderSearch.page({ search: 'T0000004' })).orders, 0)
    assert.lengthOf((await orderSearch.page({ search: 't00000042' })).orders, 0)
  })

  test("by the merchant's order number, across pids", async ({ assert }) => {
    const found = tradeIds(await orderSearch.page({ search: 'ORD-5' }))
    assert.deepEqual(
      found,
      expected(fixture, (order) => order.order_id === 'ORD-5')
    )
    assert.lengthOf(found, 3)
    assert.deepEqual(tradeIds(await orderSearch.page({ search: 'ORD-5', pid: 'shop-b' })), [
      'T00000045',
      'T00000005',
    ])
  })

  test('by receiving address: many orders, paged without duplicates or gaps', async ({
    assert,
  }) => {
    const walked = (await allPages({ search: 'TAddrOdd' }, 4)).flatMap(tradeIds)
    assert.deepEqual(
      walked,
      expected(fixture, (order) => order.receive_address === 'TAddrOdd')
    )
    assert.lengthOf(walked, 29)
  })

  test('by address in another form: a lower-case EVM address finds the checksummed one', async ({
    assert,
  }) => {
    assert.deepEqual(tradeIds(await orderSearch.page({ search: EVM_CANONICAL.toLowerCase() })), [
      'T00000059',
    ])
  })

  test('by transaction reference, also given in upper-case hex', async ({ assert }) => {
    const reference = fixture[21].block_transaction_id
    assert.deepEqual(tradeIds(await orderSearch.page({ search: reference })), ['T00000021'])
    assert.deepEqual(
      tradeIds(await orderSearch.page({ search: reference.toUpperCase().replace('0X', '0x') })),
      ['T00000021']
    )
  })

  test('search and filters together; a term matching several columns lists each order once', async ({
    assert,
  }) => {
    // T00000003's trade_id is also another order's order number and its own transaction reference.
    await db.from('orders').where('trade_id', 'T00000010').update({ order_id: 'T00000003' })
    await db
      .from('orders')
      .where('trade_id', 'T00000003')
      .update({ block_transaction_id: 'T00000003' })
    assert.deepEqual(tradeIds(await orderSearch.page({ search: 'T00000003' })), [
      'T00000010',
      'T00000003',
    ])
    assert.deepEqual(tradeIds(await orderSearch.page({ search: 'T00000003', status: 3 })), [
      'T00000010',
    ])
    const walked = (await allPages({ search: 'TAddrEven', status: 1 }, 2)).flatMap(tradeIds)
    assert.deepEqual(
      walked,
      expected(fixture, (order) => order.receive_address === 'TAddrEven' && order.status === 1)
    )
  })

  test('a term nothing has, or longer than any column, finds nothing', async ({ assert }) => {
    assert.lengthOf((await orderSearch.page({ search: 'no-such-thing' })).orders, 0)
    assert.lengthOf((await orderSearch.page({ search: 'x'.repeat(300) })).orders, 0)
    // Blank is no search at all (the unpaid orders' empty reference is never a match).
    assert.lengthOf((await orderSearch.page({ search: '   ' })).orders, 50)
  })
})

test.group('Console order search: query plans', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await seed()
    // SQLite as installed: never analysed, the planner goes by the indexes alone.
    if (db.connection().dialect.name === 'postgres') await db.rawQuery('ANALYZE orders')
  })

  /** The plan of each statement of a page, as text. */
  async function plans(
    filters: OrderFilters,
    after?: string,
    options: { listOrder: boolean } = { listOrder: true }
  ) {
    const postgres = db.connection().dialect.name === 'postgres'
    const texts: string[] = []
    for (const { sql, bindings } of orderSearch.statements(filters, { after })) {
      if (postgres) {
        // 60 rows: a sequential scan would win; the plan for a big table is the question.
        const text = await db.transaction(async (trx) => {
          await trx.rawQuery('SET LOCAL enable_seqscan = off')
          if (options.listOrder) {
            // Can the list order come from an index (no sort step)?
            await trx.rawQuery('SET LOCAL enable_bitmapscan = off')
            await trx.rawQuery('SET LOCAL enable_sort = off')
          }
          const result = await trx.rawQuery(`EXPLAIN ${sql}`, bindings as any[])
          return result.rows.map((line: Record<string, string>) => line['QUERY PLAN']).join('\n')
        })
        texts.push(text)
      } else {
        const rows = await db.rawQuery(`EXPLAIN QUERY PLAN ${sql}`, bindings as any[])
        texts.push(rows.map((line: { detail: string }) => line.detail).join('\n'))
      }
    }
    return texts
  }

  const cases: [OrderFilters, string][] = [
    [{}, 'orders_created_at_id_index'],
    [{ createdFrom: BASE, createdUntil: BASE + 5000 }, 'orders_created_at_id_index'],
    [{ status: 1 }, 'orders_status_created_at_index'],
    [{ network: 'bsc' }, 'orders_network_created_at_index'],
    [{ token: 'USDC' }, 'orders_token_created_at_index'],
    [{ pid: 'shop-b' }, 'orders_pid_created_at_index'],
    [{ paymentType: 'Compat' }, 'orders_payment_type_created_at_index'],
  ]
  for (const [filters, index] of cases) {
    test(`${JSON.stringify(filters)} reads ${index} in list order (no sort step)`, async ({
      assert,
    }) => {
      const cursor = cursorOf({ createdAt: BASE + 10_000, id: 1_000_000 })
      for (const after of [undefined, cursor]) {
        const [plan] = await plans(filters, after)
        assert.include(plan, index)
        assert.notMatch(plan, /TEMP B-TREE|Sort/)
      }
    })
  }

  const combined: [OrderFilters, string][] = [
    [{ pid: 'shop-b', status: 2, paymentType: 'Native' }, 'orders_pid_created_at_index'],
    [{ network: 'bsc', token: 'USDC', status: 4 }, 'orders_network_created_at_index'],
    [{ search: 'TAddrOdd', status: 4, network: 'tron' }, 'orders_receive_address_created_at_index'],
  ]
  for (const [filters, index] of combined) {
    test(`several filters ${JSON.stringify(filters)}: list order from one index; on SQLite ${index} drives`, async ({
      assert,
    }) => {
      const statements = await plans(filters)
      const plan = filters.search ? statements[2] : statements[0]
      assert.notMatch(plan, /TEMP B-TREE|Sort/)
      // SQLite has no statistics: the service names the driving index (PostgreSQL chooses from its own).
      if (db.connection().dialect.name !== 'postgres') {
        assert.include(plan, index)
        assert.equal(plan.split('\n').length, 1)
      }
      // The other conditions still hold.
      const walked = (await allPages(filters, 2)).flatMap((page) => page.orders)
      assert.isAbove(walked.length, 2)
      for (const order of walked) {
        if (filters.status !== undefined) assert.equal(order.status, filters.status)
        if (filters.network) assert.equal(order.network, filters.network)
        if (filters.search) assert.equal(order.receiveAddress, filters.search)
      }
    })
  }

  test('a search probes the trade_id, order_id and reference indexes, and reads the address index in list order', async ({
    assert,
  }) => {
    const found = await plans({ search: 'TAddrOdd' }, undefined, { listOrder: false })
    assert.lengthOf(found, 4)
    assert.include(found[0], 'orders_trade_id_unique')
    assert.include(found[1], 'orders_order_id_index')
    assert.include(found[3], 'orders_block_transaction_id_index')
    // An address has many orders: they must come in list order from the index.
    const [, , address] = await plans({ search: 'TAddrOdd' })
    assert.include(address, 'orders_receive_address_created_at_index')
    assert.notMatch(address, /TEMP B-TREE|Sort/)
  })
})
