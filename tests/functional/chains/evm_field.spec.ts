import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order, { OrderStatus } from '#models/order'
import chainScanner from '#services/chain_scanner'
import { RpcPool, nextUtcMidnight } from '#chains/rpc_pool'
import { endpointKey } from '#chains/endpoint_memory'
import { resetDatabase } from '#tests/helpers/database'
import { Anvil } from '#tests/helpers/evm/anvil'
import { LoadBalancer, RpcProxy, type RangeStyle } from '#tests/helpers/evm/rpc_proxy'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  type EvmFixture,
} from '#tests/helpers/evm/evm_setup'
import { registry } from '#support/runtime/metrics'

/**
 * The EVM scanner against endpoints as operators meet them (a real node,
 * anvil, behind fakes with the providers' worst habits): a load balancer
 * over a node 8 blocks behind, range refusals in every provider's style,
 * result caps, rate limits inside HTTP 200, spent daily credits. The one
 * thing that must never happen: the scan's cursor moving past a payment it
 * did not credit.
 */

type Payment = { order: Order; block: bigint }

/** Creates `count` USDT orders and pays each in its own block, `gap` blocks apart. */
async function payOrders(
  client: any,
  anvil: Anvil,
  fixture: EvmFixture,
  count: number,
  gap = 1
): Promise<Payment[]> {
  const orders: Order[] = []
  for (let index = 0; index < count; index++) orders.push(await createEthOrder(client))
  const payments: Payment[] = []
  for (const order of orders) {
    const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    const receipt = await anvil.client.getTransactionReceipt({ hash })
    payments.push({ order, block: receipt.blockNumber })
    if (gap > 1) await anvil.mine(gap - 1)
  }
  return payments
}

async function cursorBlock(): Promise<bigint | null> {
  const row = await db.from('chain_cursors').where('network', 'ethereum').first()
  return row?.cursor ? BigInt(JSON.parse(row.cursor).block) : null
}

/**
 * Scans until every payment is credited or `runs` scans are done, and after
 * every scan checks the invariant: no payment at or below the cursor is
 * left uncredited. Returns the scans it took.
 */
async function scanUntilPaid(
  assert: any,
  anvil: Anvil,
  payments: Payment[],
  runs: number
): Promise<number> {
  for (let run = 1; run <= runs; run++) {
    await chainScanner.scan({ network: 'ethereum' })
    const cursor = await cursorBlock()
    let unpaid = 0
    for (const payment of payments) {
      const { status } = await Order.findOrFail(payment.order.id)
      if (status !== OrderStatus.PAID) {
        unpaid++
        if (cursor !== null) {
          assert.isTrue(
            payment.block > cursor,
            `the cursor (${cursor}) moved past the uncredited payment of block ${payment.block}`
          )
        }
      }
    }
    if (unpaid === 0) return run
    await anvil.mine(1)
  }
  return runs + 1
}

test.group('EVM chain in the field: a load balancer over a node 8 blocks behind', (group) => {
  const anvil = new Anvil()
  let fresh: RpcProxy
  let lagging: RpcProxy
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  const balancers: LoadBalancer[] = []

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    fresh = await new RpcProxy(anvil.url).start()
    lagging = await new RpcProxy(anvil.url).start()
    return async () => {
      for (const loadBalancer of balancers) await loadBalancer.stop()
      await fresh.stop()
      await lagging.stop()
      await anvil.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    fresh.reset()
    lagging.reset()
    lagging.lag = 8n
  })

  async function balancer(order: ConstructorParameters<typeof LoadBalancer>[1]) {
    const started = await new LoadBalancer([fresh.url, lagging.url], order).start()
    balancers.push(started)
    return started
  }

  // Each HTTP request to either node in turn, at random, or the worst split: logs from the lagging node, all else from the fresh one.
  const orders: [string, ConstructorParameters<typeof LoadBalancer>[1]][] = [
    ['requests in turn', 'alternate'],
    ['requests at random', 'random'],
    [
      'logs from the lagging node, head and blocks from the fresh one',
      (body: string) => (body.includes('eth_getLogs') ? 1 : 0),
    ],
    [
      'head and logs from the fresh node, blocks from the lagging one',
      (body: string) => (body.includes('eth_getBlockByNumber') ? 1 : 0),
    ],
  ]
  for (const [name, order] of orders) {
    test(`20 payments, ${name}: every one credited, the cursor never past an uncredited one`, async ({
      client,
      assert,
    }) => {
      const lb = await balancer(order)
      const fixture = await configureEthereum(tokens, [lb.url], 3)
      await chainScanner.scan({ network: 'ethereum' }) // the cursor starts before the orders
      const payments = await payOrders(client, anvil, fixture, 20)
      await anvil.mine(3)
      const runs = await scanUntilPaid(assert, anvil, payments, 12)
      assert.isAtMost(runs, 12, 'every payment credited')
      // The lagging node really answered (the test is not a fresh node twice).
      assert.isAbove(lb.served[1], 0)
    }).timeout(120_000)
  }

  test('a payment on a block the lagging node does not have yet is never reported empty', async ({
    client,
    assert,
  }) => {
    // Every request to the lagging node: nothing can be read there, the scan must wait rather than move on.
    const lb = await balancer(() => 1)
    const fixture = await configureEthereum(tokens, [lb.url], 1)
    await chainScanner.scan({ network: 'ethereum' })
    const [payment] = await payOrders(client, anvil, fixture, 1)
    const before = await cursorBlock()
    const [report] = await chainScanner.scan({ network: 'ethereum' })
    // The lagging node's head is 8 back: its safe blocks end before the payment.
    assert.isTrue((await cursorBlock())! < payment.block, report.detail)
    assert.equal((await Order.findOrFail(payment.order.id)).status, OrderStatus.WAITING)
    assert.isTrue((await cursorBlock())! >= before!)
  }).timeout(60_000)
})

test.group(
  'EVM chain in the field: range refusals, result caps, rate limits, spent credits',
  (group) => {
    const anvil = new Anvil()
    let proxy: RpcProxy
    let backup: RpcProxy
    let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }

    group.setup(async () => {
      await anvil.start()
      tokens = await deployTokens(anvil)
      proxy = await new RpcProxy(anvil.url).start()
      backup = await new RpcProxy(anvil.url).start()
      return async () => {
        await proxy.stop()
        await backup.stop()
        await anvil.stop()
      }
    })
    group.each.setup(async () => {
      await resetDatabase()
      proxy.maxLogRange = null
      proxy.reset()
      backup.maxLogRange = null
      backup.reset()
    })

    test('Alchemy\'s HTTP 400 refusal (-32600 "up to a 100 block range", a suggested range): 1,200 blocks caught up, 5 of 5 credited, the width kept', async ({
      client,
      assert,
    }) => {
      const fixture = await configureEthereum(tokens, [proxy.url], 1)
      await chainScanner.scan({ network: 'ethereum' })
      // Alchemy's free tier says 500; segments of 200 blocks never meet that, so the fake refuses above 100.
      proxy.maxLogRange = 100n
      proxy.rangeStyle = 'alchemy'
      const payments = await payOrders(client, anvil, fixture, 5, 240)
      await anvil.mine(1200 - 5 * 240 + 1)
      const runs = await scanUntilPaid(assert, anvil, payments, 3)
      assert.isAtMost(runs, 3)
      assert.include(proxy.statuses, 400, 'the endpoint did refuse')
      const row = await db
        .from('rpc_endpoints')
        .where('endpoint_key', endpointKey(proxy.url, ''))
        .first()
      assert.equal(row.log_range, 100)

      // Remembered: the next run (a new pool, as in another process) asks 100 blocks at most from the start.
      RpcPool.reset()
      proxy.reset()
      await anvil.mine(700)
      await chainScanner.scan({ network: 'ethereum' })
      assert.notInclude(proxy.statuses, 400)
      assert.isAbove(proxy.calls.get('eth_getLogs') ?? 0, 1)
    }).timeout(120_000)

    const styles: [RangeStyle, number][] = [
      ['quicknode', 413],
      ['bsc', 200],
      ['geth', 200],
    ]
    for (const [style, status] of styles) {
      test(`${style}'s refusal (HTTP ${status}) is split until accepted; every payment credited`, async ({
        client,
        assert,
      }) => {
        const fixture = await configureEthereum(tokens, [proxy.url], 1)
        await chainScanner.scan({ network: 'ethereum' })
        proxy.maxLogRange = 25n
        proxy.rangeStyle = style
        const payments = await payOrders(client, anvil, fixture, 3, 40)
        const runs = await scanUntilPaid(assert, anvil, payments, 3)
        assert.isAtMost(runs, 3)
        assert.include(proxy.statuses, status)
        // Not an outage: the endpoint was never cooled down.
        assert.equal(RpcPool.health(proxy.url)?.failures ?? 0, 0)
        const row = await db
          .from('rpc_endpoints')
          .where('endpoint_key', endpointKey(proxy.url, ''))
          .first()
        assert.isAtMost(row.log_range, 25)
      }).timeout(120_000)
    }

    test('a result cap (-32005 "query returned more than N results. Try with this block range") is split, nothing lost', async ({
      client,
      assert,
    }) => {
      const fixture = await configureEthereum(tokens, [proxy.url], 1)
      await chainScanner.scan({ network: 'ethereum' })
      proxy.maxResults = 2
      const payments = await payOrders(client, anvil, fixture, 6)
      const runs = await scanUntilPaid(assert, anvil, payments, 3)
      assert.isAtMost(runs, 3)
    }).timeout(60_000)

    test('a rate limit inside HTTP 200 (-32005 "limit exceeded") is paced and retried, not an outage', async ({
      client,
      assert,
    }) => {
      const fixture = await configureEthereum(tokens, [proxy.url], 1)
      await chainScanner.scan({ network: 'ethereum' })
      const payments = await payOrders(client, anvil, fixture, 3, 30)
      proxy.limitStyle = '200'
      proxy.limitNext = 2
      const limitedBefore = await rateLimitedCount()
      const runs = await scanUntilPaid(assert, anvil, payments, 1)
      assert.equal(runs, 1, 'waited and asked again in the same run')
      assert.equal(proxy.limitNext, 0)
      assert.isAbove(await rateLimitedCount(), limitedBefore, 'counted as rate limited')
      assert.equal(RpcPool.health(proxy.url)?.failures ?? 0, 0, 'never cooled down as an outage')
    }).timeout(120_000)

    test("Infura's HTTP 402 (daily credits spent): the endpoint is held until 00:00 UTC, the next one serves, the next run does not ask it", async ({
      client,
      assert,
    }) => {
      const fixture = await configureEthereum(tokens, [proxy.url, backup.url], 1)
      await chainScanner.scan({ network: 'ethereum' })
      const [payment] = await payOrders(client, anvil, fixture, 1)
      proxy.reset()
      proxy.script = [{ status: 402 }]
      await chainScanner.scan({ network: 'ethereum' })
      assert.equal((await Order.findOrFail(payment.order.id)).status, OrderStatus.PAID)
      assert.deepEqual(proxy.statuses, [402])
      const row = await db
        .from('rpc_endpoints')
        .where('endpoint_key', endpointKey(proxy.url, ''))
        .first()
      assert.equal(row.hold_kind, 'credits')
      assert.equal(Number(row.hold_until), nextUtcMidnight())
      assert.match(row.hold_reason, /daily credits are spent \(HTTP 402\) until 00:00 UTC/)

      // The next run, in a fresh process (nothing in memory): the database says to leave it alone.
      RpcPool.reset()
      await anvil.mine(2)
      await chainScanner.scan({ network: 'ethereum' })
      assert.deepEqual(proxy.statuses, [402])
      assert.isAbove(backup.total(), 0)
    }).timeout(60_000)

    test('every endpoint held (its credits spent): the scan sends nothing and says until when', async ({
      assert,
    }) => {
      await configureEthereum(tokens, [proxy.url], 1)
      await chainScanner.scan({ network: 'ethereum' })
      await anvil.mine(1)
      proxy.reset()
      proxy.script = [{ status: 402 }]
      await chainScanner.scan({ network: 'ethereum' })
      assert.deepEqual(proxy.statuses, [402])
      RpcPool.reset()
      await anvil.mine(1)
      const [report] = await chainScanner.scan({ network: 'ethereum' })
      assert.isFalse(report.scanned)
      assert.match(
        report.detail,
        /every RPC endpoint is held: .*daily credits are spent \(HTTP 402\) until 00:00 UTC/
      )
      assert.deepEqual(proxy.statuses, [402], 'nothing more was sent')
      const cursor = await db.from('chain_cursors').where('network', 'ethereum').first()
      assert.match(cursor.last_error, /every RPC endpoint is held/)
    }).timeout(60_000)

    test('a Retry-After longer than the timeout is kept: the next run and other processes do not ask before it is over', async ({
      client,
      assert,
    }) => {
      const fixture = await configureEthereum(tokens, [proxy.url, backup.url], 1)
      await chainScanner.scan({ network: 'ethereum' })
      const [payment] = await payOrders(client, anvil, fixture, 1)
      proxy.reset()
      proxy.script = [{ status: 429, retryAfter: '3600' }]
      await chainScanner.scan({ network: 'ethereum' })
      assert.equal((await Order.findOrFail(payment.order.id)).status, OrderStatus.PAID)
      const row = await db
        .from('rpc_endpoints')
        .where('endpoint_key', endpointKey(proxy.url, ''))
        .first()
      assert.equal(row.hold_kind, 'rate_limited')
      assert.approximately(Number(row.hold_until) - Date.now(), 3_600_000, 60_000)
      RpcPool.reset()
      await anvil.mine(2)
      await chainScanner.scan({ network: 'ethereum' })
      assert.deepEqual(proxy.statuses, [429])
    }).timeout(60_000)
  }
)

async function rateLimitedCount(): Promise<number> {
  const metric = await registry.getSingleMetric('gateway_rpc_errors_total')!.get()
  return metric.values
    .filter((value) => value.labels.kind === 'rate_limited')
    .reduce((sum, value) => sum + value.value, 0)
}
