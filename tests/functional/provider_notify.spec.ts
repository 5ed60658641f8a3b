import { test } from '@japa/runner'
import Order from '#models/order'
import ProviderOrder from '#models/provider_order'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FakeProvider, providerNotification, requestSign } from '#tests/helpers/fake_provider'

const NOTIFY_PATH = '/payments/provider/v1/notify'

async function postRaw(body: string, contentType: string) {
  const response = await fetch(`${process.env.APP_URL}${NOTIFY_PATH}`, {
    method: 'POST',
    headers: contentType ? { 'content-type': contentType } : {},
    body,
  })
  return {
    status: response.status,
    text: await response.text(),
    type: response.headers.get('content-type'),
  }
}

async function asJson(fields: Record<string, string>) {
  const data: Record<string, string> = {}
  const top: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(fields)) {
    const match = /^data\[(.+)\]$/.exec(key)
    if (match) data[match[1]] = value
    else top[key] = value
  }
  return postRaw(JSON.stringify({ ...top, data }), 'application/json')
}

test.group('Provider notifications', (group) => {
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

  /** A placeholder switched to the provider; `ref` is the provider's order id. */
  async function providerOrder(client: any) {
    const created = await newPlaceholder(client, { amount: 100 })
    ;(await switchTo(client, created.tradeId, 'provider', 'usdt')).assertStatus(200)
    const order = await Order.findOrFail(created.id)
    const ref = (await ProviderOrder.findByOrFail('unique_id', order.tradeId)).providerOrderId
    return Object.assign(order, { ref })
  }

  test('a good JSON notification pays the order through the payment path', async ({
    client,
    assert,
  }) => {
    const order = await providerOrder(client)
    const response = await asJson(providerNotification(order.tradeId, order.ref))
    assert.equal(response.status, 200)
    assert.equal(response.text, 'success')
    assert.match(response.type!, /text\/plain/)
    const paid = await Order.findOrFail(order.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, order.ref)
    assert.equal(await countRows('callbacks', { order_id: order.id }), 1)
    const record = await ProviderOrder.findByOrFail('unique_id', order.tradeId)
    assert.equal(record.status, 'paid')
    assert.include(record.notifyRaw, '"unique_id"')
    assert.isNotNull(record.notifiedAt)
  })

  for (const [name, send] of [
    [
      'urlencoded form',
      (fields: Record<string, string>) =>
        postRaw(new URLSearchParams(fields).toString(), 'application/x-www-form-urlencoded'),
    ],
    [
      'raw query string without content type',
      (fields: Record<string, string>) => postRaw(new URLSearchParams(fields).toString(), ''),
    ],
    [
      'raw query string as text/plain',
      (fields: Record<string, string>) =>
        postRaw(new URLSearchParams(fields).toString(), 'text/plain'),
    ],
    [
      'multipart form',
      async (fields: Record<string, string>) => {
        const form = new FormData()
        for (const [key, value] of Object.entries(fields)) form.append(key, value)
        const response = await fetch(`${process.env.APP_URL}${NOTIFY_PATH}`, {
          method: 'POST',
          body: form,
        })
        return {
          status: response.status,
          text: await response.text(),
          type: response.headers.get('content-type'),
        }
      },
    ],
  ] as const) {
    test(`accepts a ${name}`, async ({ client, assert }) => {
      const order = await providerOrder(client)
      const response = await send(providerNotification(order.tradeId, order.ref))
      assert.equal(response.text, 'success')
      assert.equal((await Order.findOrFail(order.id)).status, 2)
      assert.notEqual((await ProviderOrder.findByOrFail('unique_id', order.tradeId)).notifyRaw, '')
    })
  }

  test('the request-sign scheme is accepted as well', async ({ client, assert }) => {
    const order = await providerOrder(client)
    const fields = providerNotification(order.tradeId, order.ref)
    delete (fields as Record<string, string>).sign
    const response = await asJson({ ...fields, sign: requestSign(fields).toLowerCase() })
    assert.equal(response.text, 'success')
  })

  test('a repeated notification answers success and notifies the merchant once', async ({
    client,
    assert,
  }) => {
    const order = await providerOrder(client)
    assert.equal((await asJson(providerNotification(order.tradeId, order.ref))).text, 'success')
    assert.equal((await asJson(providerNotification(order.tradeId, order.ref))).text, 'success')
    assert.equal(await countRows('callbacks'), 1)
  })

  const refusals: [string, (tradeId: string, ref: string) => Record<string, string>][] = [
    ['a bad sign', (tradeId, ref) => providerNotification(tradeId, ref, { sign: '0'.repeat(32) })],
    [
      'a wrong amount',
      (tradeId, ref) => providerNotification(tradeId, ref, { 'data[amount]': '13.79' }),
    ],
    ['a wrong coin', (tradeId, ref) => providerNotification(tradeId, ref, { 'data[coin]': 'TRX' })],
    ['another shop id', (tradeId, ref) => providerNotification(tradeId, ref, { id: 'shop-other' })],
    [
      'a status other than success',
      (tradeId, ref) => providerNotification(tradeId, ref, { status: 'error' }),
    ],
    [
      'a type other than deposit',
      (tradeId, ref) => providerNotification(tradeId, ref, { 'data[type]': 'withdraw' }),
    ],
    [
      'an unpaid payment status',
      (tradeId, ref) => providerNotification(tradeId, ref, { 'data[status]': '0' }),
    ],
    ['an unknown unique_id', (_tradeId, ref) => providerNotification('NoSuchTradeId', ref)],
    ['another provider order id', (tradeId) => providerNotification(tradeId, 'P-999')],
  ]
  for (const [name, build] of refusals) {
    test(`refuses ${name}: HTTP 400 fail, order unpaid`, async ({ client, assert }) => {
      const order = await providerOrder(client)
      const response = await asJson(build(order.tradeId, order.ref))
      assert.equal(response.status, 400)
      assert.equal(response.text, 'fail')
      assert.equal((await Order.findOrFail(order.id)).status, 1)
      assert.equal(await countRows('callbacks'), 0)
    })
  }

  test('an amount written with other trailing zeros is the same amount', async ({
    client,
    assert,
  }) => {
    const order = await providerOrder(client)
    assert.equal(
      (await asJson(providerNotification(order.tradeId, order.ref, { 'data[amount]': '13.8' })))
        .text,
      'success'
    )
  })

  test('a provider child pays its parent, whose callback carries the provider order id', async ({
    client,
    assert,
  }) => {
    const parent = await newOrder(client, { amount: 100 })
    const child = (await switchTo(client, parent.tradeId, 'provider', 'usdt')).body().data
    const ref = (await ProviderOrder.findByOrFail('unique_id', child.trade_id)).providerOrderId
    assert.equal((await asJson(providerNotification(child.trade_id, ref))).text, 'success')
    const paid = await Order.findOrFail(parent.id)
    assert.equal(paid.status, 2)
    assert.equal(paid.blockTransactionId, ref)
    assert.equal(paid.payProvider, 'provider')
    assert.equal(await countRows('callbacks', { order_id: parent.id }), 1)
  })

  test('garbage bodies answer fail, never 500', async ({ assert }) => {
    for (const [body, type] of [
      ['{not json', 'application/json'],
      ['', ''],
      ['a=b', 'application/x-www-form-urlencoded'],
    ]) {
      const response = await postRaw(body, type)
      assert.equal(response.status, 400, body)
    }
    const unparsable = await postRaw('{not json', 'application/json')
    assert.equal(unparsable.text, 'fail')
  })

  test('the config endpoint reflects the provider settings', async ({ client, assert }) => {
    const data = (await client.get('/payments/native/v1/config')).body().data
    assert.deepEqual(data.provider, { enabled: true, allow_tokens: ['USDT', 'TRX'] })
  })
})
