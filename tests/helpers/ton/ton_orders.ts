import Order from '#models/order'
import chainScanner from '#services/chain_scanner'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import type { TonFixture } from '#tests/helpers/ton/ton_setup'

/** A TON-network order over HTTP (USDT 100 CNY = 13.8 USDT unless overridden). */
export async function createTonOrder(client: any, overrides: Record<string, unknown> = {}) {
  const response = await createOrder(
    client,
    orderParams({ network: 'ton', token: 'usdt', amount: 100, ...overrides })
  )
  if (response.status() !== 200) throw new Error(JSON.stringify(response.body()))
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

/** One scan run of the ton network through the core scanner. */
export async function scanTonNetwork() {
  const [report] = await chainScanner.scan({ network: 'ton' })
  return report
}

let counter = 0
/** A fresh deployed wallet: no history from other tests, and no jetton wallet address known to the process. */
export function freshTreasury(fixture: TonFixture, role: string) {
  return fixture.chain.treasury(`${role}-${process.pid}-${++counter}`)
}

/** A fresh payer holding `units` of the test USDT. */
export async function freshPayer(fixture: TonFixture, units = 1_000_000_000n) {
  const payer = await freshTreasury(fixture, 'payer')
  await fixture.chain.mint(fixture.admin, fixture.usdt, payer.address, units)
  return payer
}
