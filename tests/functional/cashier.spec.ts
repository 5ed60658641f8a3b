import { test } from '@japa/runner'
import Order from '#models/order'
import { resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import { CASHIER_FIELDS } from '#tests/helpers/orders'
import { TRON_WALLET, createOrder, orderParams, signed } from '#tests/helpers/merchant'

test.group('Cashier read endpoints', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
  })

  test('checkout-counter answers 301 to /cashier/{trade_id}', async ({ client, assert }) => {
    const tradeId = (await createOrder(client, orderParams())).body().data.trade_id
    const response = await client.get(`/pay/checkout-counter/${tradeId}`).redirects(0)
    response.assertStatus(301)
    assert.equal(response.header('location'), `/cashier/${tradeId}`)
  })

  test('the payment_url of a new order answers 301', async ({ client, assert }) => {
    const paymentUrl: string = (await createOrder(client, orderParams())).body().data.payment_url
    const response = await fetch(paymentUrl, { redirect: 'manual' })
    assert.equal(response.status, 301)
    assert.match(response.headers.get('location')!, /^\/cashier\//)
  })

  test('init data of a concrete order: fields, ms times, empty payment_url', async ({
    client,
    assert,
  }) => {
    const created = (
      await createOrder(
        client,
        orderParams({ redirect_url: 'https://shop.example/back', amount: 100 })
      )
    ).body().data
    const before = Date.now()
    const response = await client.get(`/pay/checkout-counter-resp/${created.trade_id}`)
    const after = Date.now()
    response.assertStatus(200)
    const data = response.body().data
    assert.deepEqual(Object.keys(data).sort(), CASHIER_FIELDS)
    const order = await Order.findByOrFail('trade_id', created.trade_id)
    assert.equal(data.trade_id, created.trade_id)
    assert.strictEqual(data.amount, 100)
    assert.strictEqual(data.actual_amount, 13.8)
    assert.equal(data.token, 'USDT')
    assert.equal(data.currency, 'CNY')
    assert.equal(data.receive_address, TRON_WALLET)
    assert.equal(data.network, 'tron')
    assert.strictEqual(data.status, 1)
    assert.equal(data.payment_type, 'native')
    assert.equal(data.redirect_url, 'https://shop.example/back')
    assert.equal(data.payment_url, '')
    assert.strictEqual(data.is_selected, false)
    // milliseconds here, seconds in the create response
    assert.strictEqual(data.expiration_time, order.expirationTime)
    assert.equal(Math.floor(data.expiration_time / 1000), created.expiration_time)
    assert.strictEqual(data.created_at, order.createdAt)
    assert.isAtLeast(data.server_time, before)
    assert.isAtMost(data.server_time, after)
    assert.isAbove(data.expiration_time, data.created_at)
  })

  test('init data of a placeholder: same trade_id, zero amount, empty target', async ({
    client,
    assert,
  }) => {
    const created = (
      await createOrder(client, orderParams({ token: undefined, network: undefined }))
    ).body().data
    const data = (await client.get(`/pay/checkout-counter-resp/${created.trade_id}`)).body().data
    assert.equal(data.trade_id, created.trade_id)
    assert.strictEqual(data.status, 4)
    assert.strictEqual(data.actual_amount, 0)
    assert.equal(data.token, '')
    assert.equal(data.receive_address, '')
    assert.equal(data.network, '')
  })

  test('payment_type is lower-case compat for compat orders', async ({ client, assert }) => {
    const created = (await createOrder(client, orderParams({ payment_type: 'Compat' }))).body().data
    const data = (await client.get(`/pay/checkout-counter-resp/${created.trade_id}`)).body().data
    assert.equal(data.payment_type, 'compat')
  })

  test('check-status returns trade_id and status', async ({ client, assert }) => {
    const created = (await createOrder(client, orderParams())).body().data
    const response = await client.get(`/pay/check-status/${created.trade_id}`)
    response.assertStatus(200)
    assert.deepEqual(response.body().data, { trade_id: created.trade_id, status: 1 })
  })

  test('unknown orders are 10008 on both read endpoints', async ({ client, assert }) => {
    for (const path of [
      '/pay/checkout-counter-resp/AAAAAAAAAAAAAAAAAAAAAA',
      '/pay/check-status/AAAAAAAAAAAAAAAAAAAAAA',
      '/pay/check-status/%27%20OR%201%3D1--',
      `/pay/check-status/${'x'.repeat(500)}`,
    ]) {
      const response = await client.get(path)
      response.assertStatus(400)
      assert.equal(response.body().status_code, 10008)
      assert.isNull(response.body().data)
    }
  })

  test('trade_ids are unguessable: distinct, 22 random alphanumerics (131 bits)', async ({
    client,
    assert,
  }) => {
    const ids = new Set<string>()
    for (let index = 0; index < 20; index++) {
      ids.add(
        (await createOrder(client, orderParams({ token: undefined, network: undefined }))).body()
          .data.trade_id
      )
    }
    assert.equal(ids.size, 20)
    for (const id of ids) assert.match(id, /^[0-9A-Za-z]{22}$/)
  })
})

test.group('Legacy routes', () => {
  for (const path of [
    '/api/v1/order/create-transaction',
    '/payments/epusdt/v1/order/create-transaction',
  ]) {
    test(`POST ${path} is not registered (404)`, async ({ client, assert }) => {
      const response = await client.post(path).json(signed(orderParams())).accept('json')
      response.assertStatus(404)
      assert.equal(response.body().status_code, 404)
      assert.isString(response.body().request_id)
    })
  }
})
