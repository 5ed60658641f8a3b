import walletAdmin from '#services/operators/wallet_admin'
import rateAdmin from '#services/operators/rate_admin'
import { test } from '@japa/runner'
import Order from '#models/order'
import settings from '#settings/settings_service'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK } from '#tests/helpers/fake_chain'
import { TRON_WALLET } from '#tests/helpers/merchant'
import {
  SUBMIT_PATH,
  compatParams,
  compatSign,
  compatSigned,
  submitGet,
  submitPost,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'

async function orderFrom(response: {
  status(): number
  header(name: string): string | undefined
  body(): any
}) {
  if (response.status() !== 302)
    throw new Error(`expected 302, got ${response.status()}: ${JSON.stringify(response.body())}`)
  return Order.findByOrFail('trade_id', tradeIdFromLocation(response.header('location')))
}

test.group('Compat submit.php', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await walletAdmin.add('tron', TRON_WALLET)
  })

  test('GET with a token.network type: 302 to the cashier, a concrete compat order', async ({
    client,
    assert,
  }) => {
    const params = compatParams({ type: 'usdt.tron', out_trade_no: 'EP-1001' })
    const order = await orderFrom(await submitGet(client, compatSigned(params)))
    assert.equal(order.paymentType, 'Compat')
    assert.equal(order.orderId, 'EP-1001')
    assert.equal(order.flavourType, 'usdt.tron')
    assert.equal(order.name, 'Order from shop')
    assert.equal(order.redirectUrl, 'https://shop.example/return')
    assert.equal(order.network, 'tron')
    assert.equal(order.token, 'USDT')
    assert.equal(order.currency, 'CNY')
    assert.equal(order.amount, '100')
    assert.equal(order.actualAmount, '13.8')
    assert.equal(order.status, 1)
  })

  test('POST form works the same', async ({ client, assert }) => {
    const order = await orderFrom(
      await submitPost(client, compatSigned(compatParams({ type: 'USDT.TRON' })))
    )
    assert.equal(order.network, 'tron')
  })

  test('type alipay with nothing else and no defaults: a placeholder', async ({
    client,
    assert,
  }) => {
    const order = await orderFrom(
      await submitGet(client, compatSigned(compatParams({ type: 'alipay' })))
    )
    assert.equal(order.status, 4)
    assert.equal(order.flavourType, 'alipay')
    assert.equal(await countRows('amount_locks'), 0)
  })

  test('no type: request token and network win over the defaults', async ({ client, assert }) => {
    await settings.set('compat.default_token', 'usdt')
    await settings.set('compat.default_network', FAKE_NETWORK)
    const order = await orderFrom(
      await submitGet(client, compatSigned(compatParams({ token: 'usdt', network: 'tron' })))
    )
    assert.equal(order.network, 'tron')
  })

  test('missing token or network come from the compat defaults', async ({ client, assert }) => {
    await settings.set('compat.default_token', 'usdt')
    await settings.set('compat.default_network', FAKE_NETWORK)
    const fromDefaults = await orderFrom(await submitGet(client, compatSigned(compatParams())))
    assert.equal(fromDefaults.network, FAKE_NETWORK)
    assert.equal(fromDefaults.token, 'USDT')
    const networkOnly = await orderFrom(
      await submitGet(client, compatSigned(compatParams({ network: 'tron' })))
    )
    assert.equal(networkOnly.network, 'tron')
    assert.equal(networkOnly.token, 'USDT')
  })

  test('a valid type bypasses the default token and network', async ({ client, assert }) => {
    await settings.set('compat.default_token', 'usdt')
    await settings.set('compat.default_network', FAKE_NETWORK)
    const order = await orderFrom(
      await submitGet(
        client,
        compatSigned(compatParams({ type: 'usdt.tron', network: FAKE_NETWORK }))
      )
    )
    assert.equal(order.network, 'tron')
  })

  test('only one of token and network resolved: 400', async ({ client, assert }) => {
    const response = await submitGet(client, compatSigned(compatParams({ token: 'usdt' })))
    response.assertStatus(400)
    assert.equal(response.body().status_code, 400)
    assert.match(response.body().message, /token and network/)
    await settings.set('compat.default_network', 'tron')
    await settings.set('compat.default_token', '')
    const other = await submitGet(client, compatSigned(compatParams({ type: 'alipay' })))
    assert.equal(other.body().status_code, 400)
    assert.equal(await countRows('orders'), 0)
  })

  test('a type that is neither alipay nor an available selector: 400', async ({
    client,
    assert,
  }) => {
    for (const type of [
      'wxpay',
      'usdt.solana',
      'usdt',
      'usdt.',
      '.tron',
      'doge.tron',
      'My shop label',
    ]) {
      const response = await submitGet(client, compatSigned(compatParams({ type })))
      response.assertStatus(400)
      assert.match(response.body().message, /alipay or an available token\.network/, type)
    }
    assert.equal(await countRows('orders'), 0)
  })

  test('currency: the request, else compat.default_currency, else CNY', async ({
    client,
    assert,
  }) => {
    await rateAdmin.set('USDT', 'USD', '1')
    await rateAdmin.set('USDT', 'EUR', '0.9')
    const explicit = await orderFrom(
      await submitGet(client, compatSigned(compatParams({ type: 'usdt.tron', currency: 'usd' })))
    )
    assert.equal(explicit.currency, 'USD')
    await settings.set('compat.default_currency', 'eur')
    const fromSetting = await orderFrom(
      await submitGet(client, compatSigned(compatParams({ type: 'usdt.tron' })))
    )
    assert.equal(fromSetting.currency, 'EUR')
    await settings.set('compat.default_currency', '')
    const fallback = await orderFrom(
      await submitGet(client, compatSigned(compatParams({ type: 'usdt.tron' })))
    )
    assert.equal(fallback.currency, 'CNY')
  })

  test('extra fields are signed; sign_type is not', async ({ client, assert }) => {
    const params = compatParams({ sitename: 'My Shop', type: 'alipay' })
    ;(await orderFrom(await submitGet(client, compatSigned(params)))).orderId

    const unsignedExtra = compatParams()
    const response = await submitGet(client, {
      ...compatSigned(unsignedExtra),
      sitename: 'My Shop',
    })
    response.assertStatus(401)

    const withOtherSignType = compatParams()
    const accepted = await submitGet(client, {
      ...compatSigned(withOtherSignType),
      sign_type: 'whatever',
    })
    assert.equal(accepted.status(), 302)
  })

  test('a bad, missing or foreign sign is 401 in the envelope', async ({ client, assert }) => {
    const params = compatParams()
    for (const sign of ['0'.repeat(32), undefined]) {
      const response = await submitGet(client, { ...params, ...(sign ? { sign } : {}) })
      response.assertStatus(401)
      assert.equal(response.body().status_code, 401)
      assert.isString(response.body().request_id)
    }
    const foreign = await submitGet(client, compatSigned(params, 'some-other-secret'))
    foreign.assertStatus(401)
    const unknownPid = await submitGet(client, compatSigned(compatParams({ pid: '4040' })))
    unknownPid.assertStatus(401)
    assert.equal(await countRows('orders'), 0)
  })

  test('an upper-case sign is accepted', async ({ client, assert }) => {
    const params = compatParams()
    const response = await submitGet(client, { ...params, sign: compatSign(params).toUpperCase() })
    assert.equal(response.status(), 302)
  })

  test('out_trade_no: at most 32 characters, unique (10002)', async ({ client, assert }) => {
    const long = await submitGet(
      client,
      compatSigned(compatParams({ out_trade_no: 'x'.repeat(33) }))
    )
    long.assertStatus(400)
    assert.match(long.body().message, /out_trade_no/)
    const params = compatParams({ out_trade_no: 'EP-DUP' })
    assert.equal((await submitGet(client, compatSigned(params))).status(), 302)
    const again = await submitGet(client, compatSigned({ ...params, money: '50' }))
    again.assertStatus(400)
    assert.equal(again.body().status_code, 10002)
  })

  test('bad money and notify_url are 400', async ({ client, assert }) => {
    for (const overrides of [
      { money: '0.01' },
      { money: 'abc' },
      { notify_url: 'ftp://x.example/n' },
      { money: undefined },
    ]) {
      const response = await submitGet(client, compatSigned(compatParams(overrides)))
      response.assertStatus(400)
      assert.equal(response.body().status_code, 400)
    }
  })

  test('the path is the spec one; other methods are 404', async ({ client }) => {
    const response = await client.put(SUBMIT_PATH).form(compatSigned(compatParams())).accept('json')
    response.assertStatus(404)
  })
})
