import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import AmountLock from '#models/amount_lock'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { makeTronPayable } from '#tests/helpers/setup'
import {
  CREATE_PATH,
  TRON_WALLET,
  createOrder,
  createOrderForm,
  orderParams,
  rawPost,
  signed,
} from '#tests/helpers/merchant'

test.group('Create native transaction: concrete orders', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
  })

  test('creates a waiting order with wallet, converted amount, lock and expiration', async ({
    client,
    assert,
  }) => {
    const before = Date.now()
    const response = await createOrder(client, orderParams({ order_id: 'shop-1', amount: 100 }))
    response.assertStatus(200)
    const body = response.body()
    assert.equal(body.status_code, 200)
    assert.equal(body.message, 'success')
    assert.isString(body.request_id)
    assert.equal(response.header('x-request-id'), body.request_id)

    const data = body.data
    assert.deepEqual(Object.keys(data).sort(), [
      'actual_amount',
      'amount',
      'currency',
      'expiration_time',
      'order_id',
      'payment_url',
      'receive_address',
      'status',
      'token',
      'trade_id',
    ])
    assert.equal(data.order_id, 'shop-1')
    assert.strictEqual(data.amount, 100)
    assert.equal(data.currency, 'CNY')
    // 100 / 7.25 = 13.7931… rounded UP to 2 decimals
    assert.strictEqual(data.actual_amount, 13.8)
    assert.equal(data.token, 'USDT')
    assert.equal(data.receive_address, TRON_WALLET)
    assert.strictEqual(data.status, 1)
    assert.match(data.trade_id, /^[A-Za-z0-9]{22}$/)
    assert.equal(data.payment_url, `${process.env.APP_URL}/pay/checkout-counter/${data.trade_id}`)
    // seconds, 10 minutes ahead by default
    const expected = Math.floor((before + 10 * 60_000) / 1000)
    assert.isAtLeast(data.expiration_time, expected)
    assert.isAtMost(data.expiration_time, expected + 5)

    const order = await Order.findByOrFail('trade_id', data.trade_id)
    assert.equal(order.paymentType, 'Native')
    assert.equal(order.network, 'tron')
    assert.equal(order.pid, '1000')
    assert.equal(order.actualAmount, '13.8')
    const lock = await AmountLock.findByOrFail('order_id', order.id)
    assert.equal(lock.address, TRON_WALLET)
    assert.equal(lock.amount, '13.8')
    assert.equal(lock.token, 'USDT')
    assert.equal(lock.expiresAt, order.expirationTime)
  })

  test('rounds the crypto amount up at the token precision', async ({ client, assert }) => {
    await chainAdmin.setToken('tron', 'USDT', { precision: 4 })
    const response = await createOrder(client, orderParams({ amount: 100 }))
    response.assertStatus(200)
    assert.strictEqual(response.body().data.actual_amount, 13.7932)
  })

  test('an exact conversion is not rounded up', async ({ client, assert }) => {
    const response = await createOrder(client, orderParams({ amount: '72.50' }))
    assert.strictEqual(response.body().data.actual_amount, 10)
  })

  test('accepts a form-encoded body', async ({ client, assert }) => {
    const response = await createOrderForm(
      client,
      orderParams({ amount: '10.50', order_id: 'form-1' })
    )
    response.assertStatus(200)
    assert.equal(response.body().data.order_id, 'form-1')
    assert.strictEqual(response.body().data.amount, 10.5)
  })

  test('accepts upper- and mixed-case token, network and currency', async ({ client, assert }) => {
    const response = await createOrder(
      client,
      orderParams({ token: 'UsDt', network: 'TRON', currency: 'Cny' })
    )
    response.assertStatus(200)
    assert.equal(response.body().data.token, 'USDT')
    assert.equal(response.body().data.currency, 'CNY')
  })

  test('uses order.expiration_minutes for the lifetime', async ({ client, assert }) => {
    await settings.set('order.expiration_minutes', '30')
    const before = Math.floor(Date.now() / 1000)
    const response = await createOrder(client, orderParams())
    const expiration = response.body().data.expiration_time
    assert.isAtLeast(expiration, before + 30 * 60 - 1)
    assert.isAtMost(expiration, before + 30 * 60 + 5)
  })

  test('stores payment_type Compat, name and redirect_url', async ({ client, assert }) => {
    const response = await createOrder(
      client,
      orderParams({
        payment_type: 'compat',
        name: 'T-shirt',
        redirect_url: 'https://shop.example/done',
      })
    )
    response.assertStatus(200)
    const order = await Order.findByOrFail('trade_id', response.body().data.trade_id)
    assert.equal(order.paymentType, 'Compat')
    assert.equal(order.name, 'T-shirt')
    assert.equal(order.redirectUrl, 'https://shop.example/done')
  })

  test('payment_type Compat needs a numeric pid', async ({ client, assert }) => {
    const key = await apiKeyAdmin.create({ pid: 'shop-abc', secret: 'secret-of-shop-abc-123' })
    const response = await createOrder(
      client,
      orderParams({ pid: key.pid, payment_type: 'Compat' }),
      'secret-of-shop-abc-123'
    )
    response.assertStatus(400)
    assert.equal(response.body().status_code, 400)
    assert.match(response.body().message, /numeric pid/)
    assert.equal(await countRows('orders'), 0)
  })
})

test.group('Create native transaction: placeholders', (group) => {
  group.each.setup(() => resetDatabase())

  test('token and network omitted: status 4 placeholder without wallet or lock', async ({
    client,
    assert,
  }) => {
    const response = await createOrder(
      client,
      orderParams({ token: undefined, network: undefined })
    )
    response.assertStatus(200)
    const data = response.body().data
    assert.strictEqual(data.status, 4)
    assert.strictEqual(data.actual_amount, 0)
    assert.equal(data.receive_address, '')
    assert.equal(data.token, '')
    assert.equal(await countRows('amount_locks'), 0)
    const order = await Order.findByOrFail('trade_id', data.trade_id)
    assert.equal(order.network, '')
    assert.isFalse(order.isSelected)
  })

  test('empty token and network count as omitted', async ({ client, assert }) => {
    const response = await createOrder(client, orderParams({ token: '', network: '' }))
    response.assertStatus(200)
    assert.strictEqual(response.body().data.status, 4)
  })

  test('only one of token and network: parameter error, nothing written', async ({
    client,
    assert,
  }) => {
    for (const partial of [{ network: undefined }, { token: undefined }]) {
      const response = await createOrder(client, orderParams(partial))
      response.assertStatus(400)
      assert.equal(response.body().status_code, 400)
      assert.match(response.body().message, /token and network/)
    }
    assert.equal(await countRows('orders'), 0)
  })
})

test.group('Create native transaction: field rules', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await makeTronPayable()
  })

  const invalid: [string, Record<string, unknown>, RegExp][] = [
    ['missing order_id', { order_id: undefined }, /order_id/],
    ['order_id longer than 32', { order_id: 'x'.repeat(33) }, /order_id.*32/],
    ['missing currency', { currency: undefined }, /currency/],
    ['bad currency', { currency: 'c1' }, /currency/],
    ['missing amount', { amount: undefined }, /amount/],
    ['amount 0.01', { amount: 0.01 }, /greater than 0.01/],
    ['amount 0', { amount: 0 }, /greater than 0.01/],
    ['negative amount', { amount: -5 }, /amount/],
    ['amount not a number', { amount: 'ten' }, /amount/],
    ['amount with exponent', { amount: '1e3' }, /amount/],
    ['amount with 5 decimals', { amount: '1.23456' }, /decimal point/],
    ['huge amount', { amount: '99999999999' }, /less than/],
    ['missing notify_url', { notify_url: undefined }, /notify_url/],
    ['notify_url not http', { notify_url: 'ftp://example.com/x' }, /notify_url/],
    ['notify_url garbage', { notify_url: 'not a url' }, /notify_url/],
    ['redirect_url garbage', { redirect_url: 'javascript:alert(1)' }, /redirect_url/],
    ['unknown payment_type', { payment_type: 'paypal' }, /payment_type/],
    ['name too long', { name: 'n'.repeat(256) }, /name/],
  ]
  for (const [title, overrides, message] of invalid) {
    test(`refuses ${title} with 400 and no row`, async ({ client, assert }) => {
      const response = await createOrder(client, orderParams(overrides))
      response.assertStatus(400)
      assert.equal(response.body().status_code, 400)
      assert.match(response.body().message, message)
      assert.equal(await countRows('orders'), 0)
    })
  }

  test('amount just above 0.01 is accepted', async ({ client }) => {
    await rateAdmin.set('USDT', 'CNY', '0.001')
    const response = await createOrder(client, orderParams({ amount: 0.02 }))
    response.assertStatus(200)
  })

  test('a repeated order_id is refused with 10002', async ({ client, assert }) => {
    const params = orderParams({ order_id: 'dup-1' })
    ;(await createOrder(client, params)).assertStatus(200)
    const again = await createOrder(client, { ...params, amount: 50 })
    again.assertStatus(400)
    assert.equal(again.body().status_code, 10002)
    assert.equal(await countRows('orders', { order_id: 'dup-1' }), 1)
  })

  test('a repeated order_id is refused even when the first was a placeholder', async ({
    client,
    assert,
  }) => {
    const params = orderParams({ order_id: 'dup-2', token: undefined, network: undefined })
    ;(await createOrder(client, params)).assertStatus(200)
    const again = await createOrder(client, orderParams({ order_id: 'dup-2' }))
    assert.equal(again.body().status_code, 10002)
  })

  test('concurrent requests with one order_id create exactly one order', async ({
    client,
    assert,
  }) => {
    const params = orderParams({ order_id: 'race-1' })
    const responses = await Promise.all(
      Array.from({ length: 8 }, () => createOrder(client, params))
    )
    const codes = responses.map((response) => response.body().status_code)
    assert.equal(codes.filter((code) => code === 200).length, 1)
    assert.equal(codes.filter((code) => code === 10002).length, 7)
    assert.equal(await countRows('orders', { order_id: 'race-1' }), 1)
    assert.equal(await countRows('amount_locks'), 1)
  })
})

test.group('Create native transaction: business codes', (group) => {
  group.each.setup(() => resetDatabase())

  test('10016 for an unknown network', async ({ client, assert }) => {
    const response = await createOrder(client, orderParams({ network: 'dogechain' }))
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10016)
  })

  test('10016 for a token the network does not have', async ({ client, assert }) => {
    await makeTronPayable()
    const response = await createOrder(client, orderParams({ token: 'eth' }))
    assert.equal(response.body().status_code, 10016)
  })

  test('10016 for a disabled token', async ({ client, assert }) => {
    await makeTronPayable()
    await chainAdmin.setToken('tron', 'USDT', { enabled: false })
    const response = await createOrder(client, orderParams())
    assert.equal(response.body().status_code, 10016)
  })

  test('10014 for a disabled chain', async ({ client, assert }) => {
    await makeTronPayable()
    await chainAdmin.set('tron', { enabled: false })
    const response = await createOrder(client, orderParams())
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10014)
  })

  test('10003 when the network has no wallet', async ({ client, assert }) => {
    await rateAdmin.set('USDT', 'CNY', '7.25')
    const response = await createOrder(client, orderParams())
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10003)
  })

  test('10003 when the only wallet is disabled', async ({ client, assert }) => {
    await makeTronPayable()
    await db.from('wallets').update({ enabled: false })
    const response = await createOrder(client, orderParams())
    assert.equal(response.body().status_code, 10003)
  })

  test('10006 when no rate is known', async ({ client, assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const response = await createOrder(client, orderParams())
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10006)
    assert.match(response.body().message, /rate:set USDT CNY/)
    assert.equal(await countRows('orders'), 0)
  })

  test('10004 when the amount is below one unit of the token', async ({ client, assert }) => {
    await makeTronPayable()
    // 0.05 CNY at 7.25 CNY per USDT is 0.0069 USDT < 0.01
    const response = await createOrder(client, orderParams({ amount: 0.05 }))
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10004)
    assert.equal(await countRows('orders'), 0)
  })

  test('10005 when every amount step is taken on every wallet', async ({ client, assert }) => {
    await makeTronPayable()
    await settings.set('order.amount_max_steps', '3')
    for (let index = 0; index < 3; index++) {
      ;(await createOrder(client, orderParams({ amount: 72.5 }))).assertStatus(200)
    }
    const response = await createOrder(client, orderParams({ amount: 72.5 }))
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10005)
    assert.equal(await countRows('orders'), 3)
    const amounts = (await AmountLock.query().orderBy('amount')).map((lock) => lock.amount)
    assert.deepEqual(amounts, ['10', '10.01', '10.02'])
  })

  test('the next free amount is used before stepping up, across wallets', async ({
    client,
    assert,
  }) => {
    await makeTronPayable()
    await walletAdmin.add('tron', 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')
    const pairs = new Set<string>()
    for (let index = 0; index < 4; index++) {
      const data = (await createOrder(client, orderParams({ amount: 72.5 }))).body().data
      pairs.add(`${data.receive_address}|${data.actual_amount}`)
    }
    assert.equal(pairs.size, 4)
    const amounts = (await AmountLock.query()).map((lock) => lock.amount).sort()
    assert.deepEqual(amounts, ['10', '10', '10.01', '10.01'])
  })
})

test.group('Create native transaction: request shape', (group) => {
  group.each.setup(() => resetDatabase())

  test('malformed JSON is 10009', async ({ assert }) => {
    const response = await rawPost(CREATE_PATH, '{"pid": "1000",', 'application/json')
    assert.equal(response.status, 400)
    assert.equal(response.body.status_code, 10009)
    assert.equal(response.headers.get('x-request-id'), response.body.request_id)
  })

  test('a JSON array body is 10009', async ({ client, assert }) => {
    const response = await client.post(CREATE_PATH).json([1, 2]).accept('json')
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10009)
  })

  test('a nested object value is 10009', async ({ client, assert }) => {
    const response = await client
      .post(CREATE_PATH)
      .json({ ...signed(orderParams()), amount: { value: 1 } })
      .accept('json')
    response.assertStatus(400)
    assert.equal(response.body().status_code, 10009)
  })

  test('an oversized body is 413 in the envelope', async ({ client, assert }) => {
    const response = await client
      .post(CREATE_PATH)
      .json({ ...orderParams(), name: 'x'.repeat(200_000) })
      .accept('json')
    response.assertStatus(413)
    assert.equal(response.body().status_code, 413)
    assert.isString(response.body().request_id)
  })

  test('wrong types never produce a 500', async ({ client, assert }) => {
    for (const body of [
      { pid: 1000, amount: true },
      { pid: ['1000'] },
      { pid: null, signature: null },
      {},
    ]) {
      const response = await client.post(CREATE_PATH).json(body).accept('json')
      assert.oneOf(response.status(), [400, 401])
      assert.isNumber(response.body().status_code)
    }
  })

  test('a body of another content type is a parameter error', async ({ assert }) => {
    const response = await rawPost(CREATE_PATH, 'pid=1000', 'text/plain')
    assert.equal(response.status, 400)
    assert.equal(response.body.status_code, 400)
  })
})
