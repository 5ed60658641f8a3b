import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import chainScanner from '#services/chain_scanner'
import { RpcPool } from '#chains/rpc_pool'
import { resetDatabase } from '#tests/helpers/database'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import { Anvil } from '#tests/helpers/evm/anvil'
import { type RpcProxy } from '#tests/helpers/evm/rpc_proxy'
import {
  configureEthereum,
  startNodeBehindProxy,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'

async function createEthOrder(client: any, overrides: Record<string, unknown> = {}) {
  const response = await createOrder(
    client,
    orderParams({ network: 'ethereum', token: 'usdt', ...overrides })
  )
  if (response.status() !== 200) throw new Error(JSON.stringify(response.body()))
  return Order.findByOrFail('trade_id', response.body().data.trade_id)
}

async function scanEthereum() {
  const [report] = await chainScanner.scan({ network: 'ethereum' })
  if (!report.scanned) throw new Error(report.detail)
  return report
}

async function budget(perSecond: number | null, perDay: number | null) {
  await db
    .from('chains')
    .where('network', 'ethereum')
    .update({ rpc_requests_per_second: perSecond, rpc_requests_per_day: perDay })
}

test.group('EVM chain: request budgets (anvil behind a limiting proxy)', (group) => {
  const anvil = new Anvil()
  let proxy: RpcProxy
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    const node = await startNodeBehindProxy(anvil)
    ;({ tokens, proxy } = node)
    return node.stop
  })
  group.each.setup(async () => {
    await resetDatabase()
    proxy.maxLogRange = null
    proxy.reset()
    fixture = await configureEthereum(tokens, [proxy.url], 1)
  })

  test('every call the node sees was counted against the budget (a batch counts its calls)', async ({
    client,
    assert,
  }) => {
    await budget(1000, null)
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.mine(60) // native coin watched: blocks are read in batches
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await scanEthereum()
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.isAbove(proxy.total(), 60)
    assert.equal(RpcPool.usedToday(proxy.url), proxy.total())
  }).timeout(60_000)

  test('paced to the provider limit, a scan over many blocks draws no 429', async ({
    client,
    assert,
  }) => {
    proxy.limit(40, 40)
    await budget(40, null)
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.mine(80)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    const startedAt = Date.now()
    await scanEthereum()
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(proxy.limited, 0)
    // ~85 calls at 40/s after the first 40: the pacing really waited.
    assert.isAtLeast(Date.now() - startedAt, 1000)
  }).timeout(60_000)

  test('unpaced, the same scan is refused by the limiting proxy (the fake limits for real)', async ({
    client,
    assert,
  }) => {
    await budget(100_000, null)
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.mine(80)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    proxy.limit(40, 40)
    await chainScanner.scan({ network: 'ethereum' })
    assert.isAbove(proxy.limited, 0)
  }).timeout(60_000)

  test('a 429 with Retry-After is waited out on the same endpoint; a 503 is retried', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client)
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    proxy.script = [{ status: 429, retryAfter: '1' }, { status: 503 }]
    const first = proxy.statuses.length
    const startedAt = Date.now()
    await scanEthereum()
    assert.isAtLeast(Date.now() - startedAt, 1000)
    assert.deepEqual(proxy.statuses.slice(first, first + 3), [429, 503, 200])
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    assert.equal(RpcPool.health(proxy.url)!.failures, 0)
  }).timeout(60_000)

  test('a spent daily budget stops the scan (cursor kept), then the chain waits for the next UTC day', async ({
    client,
    assert,
  }) => {
    await createEthOrder(client)
    await scanEthereum()
    const before = (await db.from('chain_cursors').first()).cursor
    await anvil.mine(5)
    await budget(null, RpcPool.usedToday(proxy.url) + 1)
    const seen = proxy.total()
    const [failed] = await chainScanner.scan({ network: 'ethereum' })
    assert.match(failed.detail, /daily request budget/)
    assert.equal((await db.from('chain_cursors').first()).cursor, before)
    assert.equal(proxy.total(), seen + 1)
    const [skipped] = await chainScanner.scan({ network: 'ethereum' })
    assert.isFalse(skipped.scanned)
    assert.match(skipped.detail, /daily request budget of every RPC endpoint is spent/)
    assert.equal(proxy.total(), seen + 1)
  }).timeout(60_000)

  test('dust is dropped before any further read and counted; an underpayment is still kept', async ({
    client,
    assert,
  }) => {
    const order = await createEthOrder(client) // 13.80 USDT
    await scanEthereum()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, '0.000001')
    await anvil.payNative(fixture.wallet, '0.0000001')
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, '7.00')
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(1)
    proxy.reset()
    const report = await scanEthereum()
    assert.equal(report.dust, 2)
    assert.equal(report.paid, 1)
    assert.equal(report.unmatched, 1)
    const unmatched = await db.from('unmatched_payments').select('amount')
    assert.deepEqual(
      unmatched.map((row) => row.amount),
      ['7']
    )
    // No dust's receipt was asked for; the two token transfers kept each needed theirs (their position in the transaction).
    assert.equal(proxy.calls.get('eth_getTransactionReceipt') ?? 0, 2)
  }).timeout(60_000)

  test('an endpoint failing midway: the finished segments are kept, the next run resumes there', async ({
    client,
    assert,
  }) => {
    await chainAdmin.set('ethereum', { options: { blockRange: '20' } })
    const order = await createEthOrder(client)
    await scanEthereum()
    const start = BigInt(JSON.parse((await db.from('chain_cursors').first()).cursor).block)
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount) // in the first segment
    await anvil.mine(60)
    proxy.failLogsFrom = start + 21n // the second segment on
    const [interrupted] = await chainScanner.scan({ network: 'ethereum' })
    assert.isTrue(interrupted.scanned, interrupted.detail)
    assert.match(
      interrupted.detail,
      /^interrupted \(stopped after block \d+: every RPC endpoint failed; last: HTTP 503/
    )
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const row = await db.from('chain_cursors').first()
    assert.equal(JSON.parse(row.cursor).block, String(start + 20n))
    assert.match(row.last_error, /^interrupted: /)

    proxy.failLogsFrom = null
    RpcPool.reset()
    proxy.reset()
    const resumed = await scanEthereum()
    assert.isTrue(resumed.caughtUp)
    assert.equal((await db.from('chain_cursors').first()).last_error, '')
    // Resumed after the kept segment: nothing before it is read again.
    assert.equal(
      proxy.logsFrom.reduce((least, block) => (block < least ? block : least)),
      start + 21n
    )
  }).timeout(60_000)
})
