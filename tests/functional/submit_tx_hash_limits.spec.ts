import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import settings from '#settings/settings_service'
import { rpcFor } from '#chains/chain_rpc'
import { RpcPool } from '#chains/rpc_pool'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'
import { LimitedEndpoint } from '#tests/helpers/limited_endpoint'

function submit(client: any, tradeId: string, reference: string) {
  return client
    .post(`/pay/submit-tx-hash/${tradeId}`)
    .json({ block_transaction_id: reference })
    .accept('json')
}

test.group('Submit transaction hash: what one trade_id can cost', (group) => {
  let endpoint: LimitedEndpoint

  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    RpcPool.reset()
    // A fake RPC endpoint that counts every request; the fake family asks it once per lookup.
    endpoint = await new LimitedEndpoint(10_000, 10_000).start()
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ rpc_urls: JSON.stringify([endpoint.url]) })
    fakeFamily.lookupAsksRpc = true
    await settings.set('chains.verify_requests_per_second', '1000')
    return async () => {
      fakeFamily.lookupAsksRpc = false
      await endpoint.stop()
    }
  })

  test('the 6th submission on one trade_id is refused with a 429; another trade_id still works', async ({
    client,
    assert,
  }) => {
    const flooded = await newOrder(client)
    const other = await newOrder(client, { amount: 100 })
    for (let attempt = 1; attempt <= 5; attempt++) {
      const response = await submit(client, flooded.tradeId, `0xwrong${attempt}`)
      response.assertStatus(400)
      assert.match(response.body().message, /not found/)
    }
    const refused = await submit(client, flooded.tradeId, '0xwrong6')
    refused.assertStatus(429)
    assert.equal(refused.body().status_code, 429)
    assert.equal(refused.body().message, 'Too many requests')
    assert.isNotEmpty(refused.header('retry-after'))
    // Refused before any chain lookup.
    assert.deepEqual(fakeFamily.lookups, [
      '0xwrong1',
      '0xwrong2',
      '0xwrong3',
      '0xwrong4',
      '0xwrong5',
    ])
    assert.equal(endpoint.log.length, 5)

    fakeTransfer('0xgoodgoodgood', other.actualAmount)
    const paid = await submit(client, other.tradeId, '0xgoodgoodgood')
    paid.assertStatus(200)
    assert.equal(paid.body().data.status, 2)
    assert.equal((await Order.findOrFail(other.id)).status, 2)
  })

  test('the limit per trade_id is a setting (0: none)', async ({ client }) => {
    await settings.set('rate_limit.submit_per_order', '2')
    const order = await newOrder(client)
    ;(await submit(client, order.tradeId, '0xaaaaaaaa')).assertStatus(400)
    ;(await submit(client, order.tradeId, '0xbbbbbbbb')).assertStatus(400)
    ;(await submit(client, order.tradeId, '0xcccccccc')).assertStatus(429)
    await settings.set('rate_limit.submit_per_order', '0')
    ;(await submit(client, order.tradeId, '0xdddddddd')).assertStatus(400)
  })

  test("a flood of checks spends the verification budget, never the scanner's", async ({
    client,
    assert,
  }) => {
    // The scanner's endpoint budget: one request today. A shared budget would be gone after the first check.
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_day: 1 })
    await settings.set('chains.verify_requests_per_day', '3')
    await settings.set('rate_limit.submit_per_order', '0')
    const order = await newOrder(client)
    for (let attempt = 1; attempt <= 8; attempt++) {
      const response = await submit(client, order.tradeId, `0xflood${attempt}`)
      response.assertStatus(400)
      assert.match(
        response.body().message,
        attempt <= 3 ? /not found/ : /too many transaction checks on fakenet today/
      )
    }
    // Three checks reached the node; the rest were refused without a request.
    assert.equal(endpoint.log.length, 3)
    assert.equal(RpcPool.usedToday(endpoint.url, '', 'verify'), 3)
    assert.equal(RpcPool.usedToday(endpoint.url), 0)

    // The scanner's pool still has its whole budget.
    const scanner = await rpcFor(await Chain.findByOrFail('network', FAKE_NETWORK))
    assert.isFalse(scanner.budgetSpent(endpoint.url))
    await scanner.permit(endpoint.url)
    await assert.rejects(() => scanner.permit(endpoint.url), /daily request budget .* is spent/)
  })

  test('the verification pace is never faster than the endpoint allows; an own node is not paced', async ({
    assert,
  }) => {
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_second: 3 })
    await settings.set('chains.verify_requests_per_second', '50')
    await settings.set('chains.verify_requests_per_day', '0')
    const chain = await Chain.findByOrFail('network', FAKE_NETWORK)
    assert.deepEqual((await rpcFor(chain, { purpose: 'verify' })).budget(endpoint.url), {
      perSecond: 3,
      perDay: null,
    })
    await settings.set('chains.verify_requests_per_second', '2')
    await settings.set('chains.verify_requests_per_day', '40')
    assert.deepEqual((await rpcFor(chain, { purpose: 'verify' })).budget(endpoint.url), {
      perSecond: 2,
      perDay: 40,
    })
    // The operator's own node (127.0.0.1, no budget of its own): unpaced, the daily cap still holds.
    await db.from('chains').where('network', FAKE_NETWORK).update({ rpc_requests_per_second: null })
    const own = await rpcFor(await Chain.findByOrFail('network', FAKE_NETWORK), {
      purpose: 'verify',
    })
    assert.isNull(
      (await rpcFor(await Chain.findByOrFail('network', FAKE_NETWORK))).budget(endpoint.url)
    )
    assert.deepEqual(own.budget(endpoint.url), { perSecond: Number.POSITIVE_INFINITY, perDay: 40 })
  })

  test('a hash that failed is answered again from memory, with no RPC request', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeTransfer('0xwrongamount', '1.00')
    const first = await submit(client, order.tradeId, '0xwrongamount')
    first.assertStatus(400)
    assert.match(first.body().message, /transfers 1 USDT, the order expects/)
    assert.equal(endpoint.log.length, 1)

    const again = await submit(client, order.tradeId, ' 0xwrongamount ')
    again.assertStatus(400)
    assert.equal(again.body().status_code, 400)
    assert.equal(again.body().message, first.body().message)
    assert.equal(endpoint.log.length, 1)
    assert.deepEqual(fakeFamily.lookups, ['0xwrongamount'])

    // Another order asking the same hash is checked against its own amount.
    const other = await newOrder(client, { amount: 100 })
    ;(await submit(client, other.tradeId, '0xwrongamount')).assertStatus(400)
    assert.equal(endpoint.log.length, 2)
  })

  test('a refusal that can change soon (not yet confirmed) is asked again; 0 minutes keeps nothing', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeTransfer('0xpending', order.actualAmount, { confirmations: 0 })
    assert.match(
      (await submit(client, order.tradeId, '0xpending')).body().message,
      /not yet confirmed/
    )
    fakeTransfer('0xpending', order.actualAmount, { confirmations: 3 })
    const paid = await submit(client, order.tradeId, '0xpending')
    paid.assertStatus(200)
    assert.equal(endpoint.log.length, 2)

    await settings.set('chains.verify_failed_cache_minutes', '0')
    const next = await newOrder(client, { amount: 100 })
    ;(await submit(client, next.tradeId, '0xmissing')).assertStatus(400)
    ;(await submit(client, next.tradeId, '0xmissing')).assertStatus(400)
    assert.equal(endpoint.log.length, 4)
  })
})
