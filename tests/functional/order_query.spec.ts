import walletAdmin from '#services/operators/wallet_admin'
import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import type { ApiClient } from '@japa/api-client'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import settings from '#settings/settings_service'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_WALLET } from '#tests/helpers/fake_chain'
import { TEST_SECRET, TRON_WALLET, merchantSign } from '#tests/helpers/merchant'

const QUERY_PATH = '/payments/native/v1/order/query'

/** A signed query, as a merchant sends it (JSON, or form fields). */
function query(
  client: ApiClient,
  fields: Record<string, unknown>,
  options: { secret?: string; form?: boolean } = {}
) {
  const params = { pid: '1000', ...fields }
  const body = { ...params, signature: merchantSign(params, options.secret ?? TEST_SECRET) }
  const request = client.post(QUERY_PATH).accept('json')
  if (!options.form) return request.json(body)
  return request.form(
    Object.fromEntries(Object.entries(body).map(([name, value]) => [name, String(value)]))
  )
}

test.group('Native order query', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await settings.set('rate_limit.query_per_minute', '0')
  })

  test('by trade_id or by order_id: the order as its merchant knows it; paid: the reference and the time', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, {
      order_id: 'shop-42',
      redirect_url: 'https://shop.example/done',
    })
    const waiting = await query(client, { trade_id: order.tradeId })
    waiting.assertStatus(200)
    assert.equal(waiting.body().status_code, 200)
    assert.deepEqual(waiting.body().data, {
      trade_id: order.tradeId,
      order_id: 'shop-42',
      amount: 100,
      currency: 'CNY',
      actual_amount: 13.8,
      token: 'USDT',
      network: FAKE_NETWORK,
      receive_address: FAKE_WALLET,
      status: 1,
      payment_type: 'native',
      pay_provider: '',
      block_transaction_id: '',
      created_at: Math.floor(order.createdAt / 1000),
      expiration_time: Math.floor(order.expirationTime / 1000),
      paid_at: null,
      is_selected: false,
      redirect_url: 'https://shop.example/done',
      payment_url: `${process.env.APP_URL}/pay/checkout-counter/${order.tradeId}`,
      child: null,
    })

    await paymentService.markPaid(order.id, {
      reference: '0xpaid',
      position: 'log:0',
      source: 'scanner',
      paidAt: 1_790_000_000_123,
    })
    const paid = await query(client, { order_id: 'shop-42' }, { form: true })
    paid.assertStatus(200)
    assert.equal(paid.body().data.status, 2)
    assert.equal(paid.body().data.block_transaction_id, '0xpaid')
    assert.equal(paid.body().data.paid_at, 1_790_000_000)
  })

  test('a placeholder: status 4, then the target the payer switched to, and the child of a second switch with its own state', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const placeholder = await newPlaceholder(client, { order_id: 'shop-ph' })
    const open = await query(client, { order_id: 'shop-ph' })
    assert.equal(open.body().data.status, 4)
    assert.equal(open.body().data.token, '')
    assert.equal(open.body().data.actual_amount, 0)

    ;(await switchTo(client, placeholder.tradeId, FAKE_NETWORK)).assertStatus(200)
    const chosen = await query(client, { trade_id: placeholder.tradeId })
    assert.equal(chosen.body().data.status, 1)
    assert.equal(chosen.body().data.network, FAKE_NETWORK)
    assert.isNull(chosen.body().data.child)

    const switched = await switchTo(client, placeholder.tradeId, 'tron')
    switched.assertStatus(200)
    const childId = switched.body().data.trade_id
    const withChild = await query(client, { trade_id: placeholder.tradeId })
    assert.equal(withChild.body().data.status, 1)
    assert.include(withChild.body().data.child, {
      trade_id: childId,
      network: 'tron',
      status: 1,
      block_transaction_id: '',
    })

    // The child is paid: the parent is paid with the child's details, and says so.
    const child = await Order.findByOrFail('trade_id', childId)
    await paymentService.markPaid(child.id, { reference: 'tron-tx', source: 'scanner' })
    const paid = await query(client, { order_id: 'shop-ph' })
    assert.equal(paid.body().data.status, 2)
    assert.equal(paid.body().data.network, 'tron')
    assert.equal(paid.body().data.block_transaction_id, 'tron-tx')
    assert.include(paid.body().data.child, {
      trade_id: childId,
      status: 2,
      block_transaction_id: 'tron-tx',
    })
  })

  test("another merchant's order, an unknown one and a child's trade_id are all 10008", async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await apiKeyAdmin.create({ pid: '2001', secret: 'secret-of-2001-abcdef' })
    const mine = await newOrder(client, { order_id: 'same-number' })
    const childId = (await switchTo(client, mine.tradeId, 'tron')).body().data.trade_id
    for (const [fields, secret, pid] of [
      [{ trade_id: mine.tradeId }, 'secret-of-2001-abcdef', '2001'],
      [{ order_id: 'same-number' }, 'secret-of-2001-abcdef', '2001'],
      [{ trade_id: 'NoSuchTradeId0000000000' }, TEST_SECRET, '1000'],
      [{ order_id: 'never-made' }, TEST_SECRET, '1000'],
      [{ trade_id: childId }, TEST_SECRET, '1000'],
    ] as const) {
      const response = await query(client, { ...fields, pid }, { secret })
      response.assertStatus(400)
      assert.equal(response.body().status_code, 10008, JSON.stringify(fields))
      assert.isNull(response.body().data)
    }
  })

  test('refusals: unsigned or wrongly signed (401, saying how to sign), no order named (400)', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const wrong = await client
      .post(QUERY_PATH)
      .json({ pid: '1000', trade_id: order.tradeId, signature: 'f'.repeat(64) })
      .accept('json')
    wrong.assertStatus(401)
    assert.equal(wrong.body().status_code, 401)
    assert.match(wrong.body().message, /HMAC-SHA256 .*\(here: pid, trade_id\)/)
    const unsigned = await client
      .post(QUERY_PATH)
      .json({ pid: '1000', trade_id: order.tradeId })
      .accept('json')
    unsigned.assertStatus(401)
    const neither = await query(client, {})
    neither.assertStatus(400)
    assert.equal(neither.body().status_code, 400)
    assert.match(neither.body().message, /Give the trade_id or the order_id/)
    const noPid = await client
      .post(QUERY_PATH)
      .json({ trade_id: order.tradeId, signature: 'x' })
      .accept('json')
    noPid.assertStatus(400)
    assert.match(noPid.body().message, /pid field is required/)
  })

  test('limited per pid on its own budget: queries never use up the creates', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    await settings.set('rate_limit.query_per_minute', '2')
    await settings.set('rate_limit.create_per_minute', '5')
    const statuses: number[] = []
    for (let index = 0; index < 3; index++)
      statuses.push((await query(client, { trade_id: order.tradeId })).status())
    assert.deepEqual(statuses, [200, 200, 429])
    // Creates still have their own budget.
    const created = await newOrder(client)
    assert.isAbove(created.id, order.id)
  })
})
