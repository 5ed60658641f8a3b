import db from '@adonisjs/lucid/services/db'

let sequence = 0

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
