import db from '@adonisjs/lucid/services/db'

/** A day in milliseconds (order and payment times in the tests go back by days). */
export const DAY = 86_400_000

/** A stored order as the console lists it (the columns the tests vary). */
export type OrderRow = {
  trade_id: string
  order_id: string
  pid: string
  payment_type: 'Native' | 'Compat'
  status: number
  network: string
  token: string
  receive_address: string
  block_transaction_id: string
  name: string
  created_at: number
  parent_id?: number | null
}

/**
 * Writes orders straight into the table (the console reads what is
 * there, however it got there): `make(i)` gives each one's columns over
 * plain defaults. Returns their ids in insertion order.
 */
export async function insertOrders(
  count: number,
  make: (index: number) => Partial<OrderRow> = () => ({})
) {
  const ids: number[] = []
  const base = 1_700_000_000_000
  for (let start = 0; start < count; start += 200) {
    const rows = []
    for (let index = start; index < Math.min(count, start + 200); index++) {
      const row = make(index)
      const createdAt = row.created_at ?? base + index * 1000
      rows.push({
        trade_id: `T${String(index).padStart(8, '0')}`,
        order_id: `ORD-${index}`,
        pid: '1000',
        payment_type: 'Native',
        status: 1,
        network: 'tron',
        token: 'USDT',
        receive_address: 'TAddress0',
        block_transaction_id: '',
        name: '',
        currency: 'CNY',
        amount: '10',
        actual_amount: '1.38',
        notify_url: 'http://merchant.test/notify',
        expiration_time: createdAt + 600_000,
        ...row,
        created_at: createdAt,
        updated_at: createdAt,
      })
    }
    await db.table('orders').multiInsert(rows)
    const stored = await db
      .from('orders')
      .whereIn(
        'trade_id',
        rows.map((entry) => entry.trade_id)
      )
      .select('id', 'trade_id')
    const idOf = new Map(
      stored.map((entry: { id: number | string; trade_id: string }) => [
        entry.trade_id,
        Number(entry.id),
      ])
    )
    ids.push(...rows.map((entry) => idOf.get(entry.trade_id)!))
  }
  return ids
}

let sequence = 0

/** `count` orders cycling through the four statuses, the last with a product name long enough to wrap. */
export function insertOrdersOfEveryStatus(count: number) {
  return insertOrders(count, (index) => ({
    status: (index % 4) + 1,
    name: index === count - 1 ? 'A rather long product name that wraps' : '',
  }))
}

export type OrderRowSeed = {
  status: 1 | 2 | 3 | 4
  createdAt: number
  token?: string
  network?: string
  actualAmount?: string
  amount?: string
  currency?: string
  parentId?: number | null
  pid?: string
}

/** The trade_id of the n-th order row written since the last reset ("T000000000001"…). */
export function seededTradeId(n: number) {
  return `T${String(n).padStart(12, '0')}`
}

/** Numbers the next rows from 1 again (call after resetDatabase). */
export function resetOrderRows() {
  sequence = 0
}

/**
 * Writes one order row as the services would have left it, straight into
 * the table (figures over many days and states without running the whole
 * order lifecycle); returns its id. A placeholder (status 4) has no target.
 */
export async function seedOrderRow(seed: OrderRowSeed): Promise<number> {
  sequence++
  const placeholder = seed.status === 4
  const [row] = await db
    .table('orders')
    .insert({
      trade_id: seededTradeId(sequence),
      order_id: `O${sequence}`,
      parent_id: seed.parentId ?? null,
      pid: seed.pid ?? '1000',
      payment_type: 'Native',
      currency: seed.currency ?? 'CNY',
      amount: seed.amount ?? '100',
      token: placeholder ? '' : (seed.token ?? 'USDT'),
      network: placeholder ? '' : (seed.network ?? 'tron'),
      receive_address: placeholder ? '' : `addr-${sequence}`,
      actual_amount: placeholder ? '0' : (seed.actualAmount ?? '13.8'),
      status: seed.status,
      notify_url: 'https://merchant.example/notify',
      expiration_time: seed.createdAt + 600_000,
      paid_at: seed.status === 2 ? seed.createdAt + 60_000 : null,
      created_at: seed.createdAt,
      updated_at: seed.createdAt,
    })
    .returning('id')
  return Number(typeof row === 'object' ? row.id : row)
}
