import walletAdmin from '#services/operators/wallet_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import ProviderOrder from '#models/provider_order'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import {
  CASHIER_FIELDS,
  newOrder,
  newPlaceholder,
  prepareLifecycle,
  switchTo,
} from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_WALLET } from '#tests/helpers/fake_chain'
import { FakeProvider, SHOP_ID, requestSign } from '#tests/helpers/fake_provider'
import { TRON_WALLET } from '#tests/helpers/merchant'

test.group('Switch network: placeholders', (group) => {
  const provider = new FakeProvider()
  group.setup(async () => {
    await provider.start()
    return () => provider.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await provider.configure()
  })

  test('first on-chain selection completes the placeholder in place', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client, { amount: 100 })
    const response = await switchTo(client, order.tradeId, FAKE_NETWORK, 'USDT')
    response.assertStatus(200)
    const data = response.body().data
    assert.deepEqual(Object.keys(data).sort(), CASHIER_FIELDS)
    assert.equal(data.trade_id, order.tradeId)
    assert.strictEqual(data.status, 1)
    assert.equal(data.network, FAKE_NETWORK)
    assert.equal(data.token, 'USDT')
    assert.equal(data.receive_address, FAKE_WALLET)
    assert.strictEqual(data.actual_amount, 13.8)
    assert.equal(data.payment_url, '')
    assert.isFalse(data.is_selected)
    assert.equal(await countRows('orders'), 1)
    assert.equal(await countRows('amount_locks', { order_id: order.id }), 1)
    assert.isTrue((await Order.findOrFail(order.id)).wasPlaceholder)
  })

  test('the same selection again marks the completed placeholder selected', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    await switchTo(client, order.tradeId, FAKE_NETWORK)
    const again = await switchTo(client, order.tradeId, FAKE_NETWORK)
    again.assertStatus(200)
    assert.equal(again.body().data.trade_id, order.tradeId)
    assert.isTrue(again.body().data.is_selected)
    assert.equal(await countRows('orders'), 1)
    assert.equal(await countRows('amount_locks'), 1)
  })

  test('first provider selection converts the placeholder into a provider order', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client, {
      amount: 100,
      redirect_url: 'https://shop.example/back',
    })
    const response = await switchTo(client, order.tradeId, 'provider', 'usdt')
    response.assertStatus(200)
    const data = response.body().data
    assert.equal(data.trade_id, order.tradeId)
    assert.strictEqual(data.status, 1)
    assert.equal(data.network, 'provider')
    assert.equal(data.receive_address, 'PROVIDER')
    assert.equal(data.token, 'USDT')
    assert.strictEqual(data.actual_amount, 13.8)
    assert.equal(data.payment_url, 'https://pay.example/checkout/P-1')
    assert.isFalse(data.is_selected)
    const stored = await Order.findOrFail(order.id)
    assert.equal(stored.payProvider, 'provider')
    assert.equal(await countRows('amount_locks'), 0)

    const sent = provider.linkRequest(order.tradeId)!
    assert.equal(sent.sign, requestSign(sent))
    assert.deepInclude(sent, {
      unique_id: order.tradeId,
      name: order.tradeId,
      amount: '13.80',
      coin: 'USDT',
      id: SHOP_ID,
      // Through the gateway's return page: it sends the payer on to https://shop.example/back once paid.
      return_url: `${process.env.APP_URL}/pay/return/${order.tradeId}`,
      callback_url: `${process.env.APP_URL}/payments/provider/v1/notify`,
    })
    const record = await ProviderOrder.findByOrFail('unique_id', order.tradeId)
    assert.equal(record.status, 'pending')
    assert.equal(record.orderId, order.id)
    assert.equal(record.providerOrderId, 'P-1')
  })

  test('return_url falls back to provider.return_url, then the cashier', async ({
    client,
    assert,
  }) => {
    const first = await newPlaceholder(client)
    await switchTo(client, first.tradeId, 'provider')
    assert.equal(
      provider.linkRequest(first.tradeId)!.return_url,
      `${process.env.APP_URL}/pay/checkout-counter/${first.tradeId}`
    )
    await settings.set('provider.return_url', 'https://shop.example/thanks')
    const second = await newPlaceholder(client)
    await switchTo(client, second.tradeId, 'provider')
    assert.equal(provider.linkRequest(second.tradeId)!.return_url, 'https://shop.example/thanks')
  })

  test('a provider failure changes nothing and says why', async ({ client, assert }) => {
    for (const mode of ['empty', 'http500'] as const) {
      provider.mode = mode
      const order = await newPlaceholder(client)
      const response = await switchTo(client, order.tradeId, 'provider')
      response.assertStatus(400)
      assert.match(response.body().message, /payment provider did not create a payment link/)
      const stored = await Order.findOrFail(order.id)
      assert.equal(stored.status, 4)
      assert.equal(stored.payProvider, '')
      assert.equal((await ProviderOrder.findByOrFail('unique_id', order.tradeId)).status, 'failed')
    }
  })

  test('a provider that does not answer times out', async ({ client, assert }) => {
    provider.mode = 'slow'
    await settings.set('provider.timeout_seconds', '1')
    const order = await newPlaceholder(client)
    const response = await switchTo(client, order.tradeId, 'provider')
    response.assertStatus(400)
    assert.match(response.body().message, /unreachable/)
    assert.equal((await Order.findOrFail(order.id)).status, 4)
  }).timeout(10_000)

  test('provider codes: disabled 10017, incomplete 10018, token not allowed 10019', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    await settings.set('provider.allow_tokens', 'TRX')
    assert.equal(
      (await switchTo(client, order.tradeId, 'provider', 'usdt')).body().status_code,
      10019
    )
    await settings.set('provider.shop_token', '')
    const incomplete = await switchTo(client, order.tradeId, 'provider', 'trx')
    assert.equal(incomplete.body().status_code, 10018)
    assert.match(incomplete.body().message, /provider.shop_token/)
    await settings.set('provider.enabled', 'false')
    assert.equal(
      (await switchTo(client, order.tradeId, 'provider', 'trx')).body().status_code,
      10017
    )
    assert.equal((await Order.findOrFail(order.id)).status, 4)
  })

  test('on-chain codes: disabled chain 10014, unknown asset 10016, no wallet 10003', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client)
    await chainAdmin.set('ethereum', { enabled: false })
    assert.equal((await switchTo(client, order.tradeId, 'ethereum')).body().status_code, 10014)
    assert.equal((await switchTo(client, order.tradeId, 'nowhere')).body().status_code, 10016)
    assert.equal(
      (await switchTo(client, order.tradeId, FAKE_NETWORK, 'doge')).body().status_code,
      10016
    )
    assert.equal((await switchTo(client, order.tradeId, 'bsc')).body().status_code, 10003)
    assert.equal((await Order.findOrFail(order.id)).status, 4)
  })

  test('concurrent first selections complete the placeholder once', async ({ client, assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await chainAdmin.setToken(FAKE_NETWORK, 'USDT', { precision: 2 })
    const order = await newPlaceholder(client)
    const responses = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        switchTo(client, order.tradeId, index % 2 === 0 ? FAKE_NETWORK : 'tron')
      )
    )
    for (const response of responses) assert.oneOf(response.body().status_code, [200, 10011])
    const stored = await Order.findOrFail(order.id)
    assert.equal(stored.status, 1)
    // at most the parent and one child, each with one lock
    assert.isAtMost(await countRows('orders'), 2)
    assert.equal(await countRows('amount_locks'), await countRows('orders'))
  })
})

test.group('Switch network: waiting parents', (group) => {
  const provider = new FakeProvider()
  group.setup(async () => {
    await provider.start()
    return () => provider.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await provider.configure()
    await walletAdmin.add('tron', TRON_WALLET)
  })

  test('the same target returns the order unchanged', async ({ client, assert }) => {
    const order = await newOrder(client)
    const response = await switchTo(client, order.tradeId, FAKE_NETWORK)
    response.assertStatus(200)
    assert.equal(response.body().data.trade_id, order.tradeId)
    assert.isFalse(response.body().data.is_selected)
    assert.equal(await countRows('orders'), 1)
  })

  test('another target creates one child with the merchant data and its own lock', async ({
    client,
    assert,
  }) => {
    const parent = await newOrder(client, { name: 'Book', redirect_url: 'https://shop.example/r' })
    const response = await switchTo(client, parent.tradeId, 'tron')
    response.assertStatus(200)
    const data = response.body().data
    assert.notEqual(data.trade_id, parent.tradeId)
    assert.equal(data.network, 'tron')
    assert.equal(data.receive_address, TRON_WALLET)
    assert.equal(data.payment_url, '')
    const child = await Order.findByOrFail('trade_id', data.trade_id)
    assert.equal(child.parentId, parent.id)
    assert.equal(child.orderId, parent.orderId)
    assert.equal(child.amount, parent.amount)
    assert.equal(child.currency, parent.currency)
    assert.equal(child.notifyUrl, parent.notifyUrl)
    assert.equal(child.name, 'Book')
    assert.equal(child.pid, parent.pid)
    assert.equal(child.expirationTime, parent.expirationTime)
    assert.equal(await countRows('amount_locks', { order_id: child.id }), 1)
    const unchanged = await Order.findOrFail(parent.id)
    assert.equal(unchanged.network, FAKE_NETWORK)
    assert.equal(unchanged.status, 1)
  })

  test('the child target again returns the child; a third target is 10011', async ({
    client,
    assert,
  }) => {
    const parent = await newOrder(client)
    const childId = (await switchTo(client, parent.tradeId, 'tron')).body().data.trade_id
    const again = await switchTo(client, parent.tradeId, 'tron')
    assert.equal(again.body().data.trade_id, childId)
    const third = await switchTo(client, parent.tradeId, 'provider')
    third.assertStatus(400)
    assert.equal(third.body().status_code, 10011)
    // and the parent's own target still returns the parent
    assert.equal(
      (await switchTo(client, parent.tradeId, FAKE_NETWORK)).body().data.trade_id,
      parent.tradeId
    )
    assert.equal(await countRows('orders'), 2)
  })

  test('a provider child carries the hosted link', async ({ client, assert }) => {
    const parent = await newOrder(client)
    const response = await switchTo(client, parent.tradeId, 'provider', 'usdt')
    response.assertStatus(200)
    const data = response.body().data
    assert.notEqual(data.trade_id, parent.tradeId)
    assert.equal(data.network, 'provider')
    assert.equal(data.receive_address, 'PROVIDER')
    assert.match(data.payment_url, /^https:\/\/pay\.example\/checkout\//)
    const child = await Order.findByOrFail('trade_id', data.trade_id)
    assert.equal(child.parentId, parent.id)
    assert.equal((await ProviderOrder.findByOrFail('unique_id', child.tradeId)).orderId, child.id)
  })

  test('a child cannot be switched (10012)', async ({ client, assert }) => {
    const parent = await newOrder(client)
    const childId = (await switchTo(client, parent.tradeId, 'tron')).body().data.trade_id
    const response = await switchTo(client, childId, FAKE_NETWORK)
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10012)
  })

  test('a paid or expired parent cannot be switched (10013)', async ({ client, assert }) => {
    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: 'tx', source: 'scanner' })
    assert.equal((await switchTo(client, paid.tradeId, 'tron')).body().status_code, 10013)
    const expired = await newOrder(client)
    await db.from('orders').where('id', expired.id).update({ status: 3 })
    assert.equal((await switchTo(client, expired.tradeId, 'tron')).body().status_code, 10013)
    const overdue = await newOrder(client)
    await db
      .from('orders')
      .where('id', overdue.id)
      .update({ expiration_time: Date.now() - 1000 })
    const late = await switchTo(client, overdue.tradeId, 'tron')
    assert.equal(late.body().status_code, 10013)
    assert.match(late.body().message, /expired/)
  })

  test('concurrent switches of one parent create one child', async ({ client, assert }) => {
    const parent = await newOrder(client)
    const targets = ['tron', 'provider', 'tron', 'provider', 'tron', 'provider']
    const responses = await Promise.all(
      targets.map((network) => switchTo(client, parent.tradeId, network))
    )
    const codes = responses.map((response) => response.body().status_code)
    for (const code of codes) assert.oneOf(code, [200, 10011])
    assert.equal(await countRows('orders', { parent_id: parent.id }), 1)
    const child = await Order.findByOrFail('parent_id', parent.id)
    const winners = responses.filter((response) => response.body().status_code === 200)
    for (const winner of winners) assert.equal(winner.body().data.trade_id, child.tradeId)
  })

  test('unknown order 10008; bad bodies 400', async ({ client, assert }) => {
    assert.equal(
      (await switchTo(client, 'NoSuchTradeId0000000000', 'tron')).body().status_code,
      10008
    )
    const missing = await client.post('/pay/switch-network').json({ trade_id: 'x' }).accept('json')
    missing.assertStatus(400)
    assert.equal(missing.body().status_code, 400)
  })
})
