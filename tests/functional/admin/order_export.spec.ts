import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import orderSearch, { type OrderFilters } from '#services/admin/order_search'
import { EXPORT_COLUMNS, OrderExport, cappedNotice } from '#services/admin/order_export'
import { resetDatabase } from '#tests/helpers/database'
import { insertOrders } from '#tests/helpers/order_rows'

const BASE = 1_700_000_000_000

async function collect(lines: AsyncGenerator<string>) {
  const all: string[] = []
  for await (const line of lines) all.push(line)
  return all
}

/** Eight orders T00000000..T00000007, one second apart; the odd ones paid. */
async function seed() {
  return insertOrders(8, (index) => ({
    status: index % 2 === 1 ? 2 : 1,
    created_at: BASE + index * 1000,
    block_transaction_id: index % 2 === 1 ? `0xref${index}` : '',
  }))
}

test.group('Console order export (CSV)', (group) => {
  group.each.setup(() => resetDatabase())

  test('a header, then one CRLF line per order, newest first, with every column', async ({
    assert,
  }) => {
    await seed()
    const lines = await collect(new OrderExport().lines({}))
    assert.equal(lines[0], `${EXPORT_COLUMNS.join(',')}\r\n`)
    assert.lengthOf(lines, 9)
    assert.deepEqual(
      lines.slice(1).map((line) => line.split(',')[1]),
      [
        'T00000007',
        'T00000006',
        'T00000005',
        'T00000004',
        'T00000003',
        'T00000002',
        'T00000001',
        'T00000000',
      ]
    )
    const first = lines[1].replace(/\r\n$/, '').split(',')
    const cell = (name: (typeof EXPORT_COLUMNS)[number]) => first[EXPORT_COLUMNS.indexOf(name)]
    assert.equal(cell('created_at'), new Date(BASE + 7000).toISOString())
    assert.equal(cell('status'), '2')
    assert.equal(cell('status_name'), 'paid')
    assert.equal(cell('block_transaction_id'), '0xref7')
    assert.equal(cell('amount'), '10')
    assert.equal(cell('actual_amount'), '1.38')
    assert.equal(cell('parent_trade_id'), '')
  })

  test('the filters and the search of the list apply', async ({ assert }) => {
    await seed()
    const paid = await collect(new OrderExport().lines({ status: 2 }))
    assert.deepEqual(
      paid.slice(1).map((line) => line.split(',')[1]),
      ['T00000007', 'T00000005', 'T00000003', 'T00000001']
    )
    const searched = await collect(new OrderExport().lines({ search: '0xref3' }))
    assert.lengthOf(searched, 2)
    assert.include(searched[1], 'T00000003')
  })

  test("merchant text is escaped and can't become a formula; a child names its parent", async ({
    assert,
  }) => {
    const [parentId] = await insertOrders(1, () => ({ trade_id: 'PARENT01', order_id: 'shop-1' }))
    await insertOrders(1, () => ({
      trade_id: 'CHILD001',
      order_id: 'shop-1',
      parent_id: parentId,
      name: '=HYPERLINK("http://evil.test"), "gift"\nline 2',
      created_at: BASE + 60_000,
    }))
    const [, child] = await collect(new OrderExport().lines({}))
    assert.include(child, ',PARENT01,')
    assert.include(child, `,"'=HYPERLINK(""http://evil.test""), ""gift""\nline 2",`)
    assert.isTrue(child.endsWith('\r\n'))
  })

  test('past the cap the file ends with a line saying so', async ({ assert }) => {
    await seed()
    const capped = await collect(new OrderExport().lines({}, { cap: 5, batch: 3 }))
    assert.lengthOf(capped, 1 + 5 + 1)
    assert.equal(capped.at(-1), `${cappedNotice(5)}\r\n`)
    assert.match(capped.at(-1)!, /^# capped at 5 orders/)
    // The cap on a batch boundary: the next batch tells whether more exist.
    const boundary = await collect(new OrderExport().lines({}, { cap: 6, batch: 3 }))
    assert.lengthOf(boundary, 1 + 6 + 1)
    assert.match(boundary.at(-1)!, /^# capped at 6 orders/)
  })

  test('exactly the cap, or fewer: no notice', async ({ assert }) => {
    await seed()
    const exact = await collect(new OrderExport().lines({}, { cap: 8, batch: 3 }))
    assert.lengthOf(exact, 9)
    assert.notMatch(exact.at(-1)!, /capped/)
    const filtered = await collect(new OrderExport().lines({ status: 2 }, { cap: 4, batch: 2 }))
    assert.lengthOf(filtered, 5)
    assert.notMatch(filtered.at(-1)!, /capped/)
  })

  test('reads one batch at a time, and the next only once the reader took the previous', async ({
    assert,
  }) => {
    await seed()
    let fetched = 0
    const counting = {
      async *batches(filters: OrderFilters, size?: number) {
        for await (const batch of orderSearch.batches(filters, size)) {
          fetched++
          yield batch
        }
      },
    }
    const lines = new OrderExport(counting).lines({}, { batch: 3 })
    await lines.next() // header
    assert.equal(fetched, 0)
    await lines.next()
    await lines.next()
    await lines.next()
    assert.equal(fetched, 1)
    await lines.next()
    assert.equal(fetched, 2)
    assert.lengthOf(await collect(lines), 4)
    assert.equal(fetched, 3)
  })

  test('keyset batches cover every order once, also across one millisecond', async ({ assert }) => {
    await insertOrders(25, (index) => ({ created_at: BASE + Math.floor(index / 4) }))
    const lines = await collect(new OrderExport().lines({}, { batch: 3 }))
    const tradeIds = lines.slice(1).map((line) => line.split(',')[1])
    assert.lengthOf(tradeIds, 25)
    assert.equal(new Set(tradeIds).size, 25)
    const stored = await db
      .from('orders')
      .orderBy('created_at', 'desc')
      .orderBy('id', 'desc')
      .select('trade_id')
    assert.deepEqual(
      tradeIds,
      stored.map((row) => row.trade_id)
    )
  })
})
