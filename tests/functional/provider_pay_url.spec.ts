import { test } from '@japa/runner'
import Order from '#models/order'
import ProviderOrder from '#models/provider_order'
import { resetDatabase } from '#tests/helpers/database'
import { newPlaceholder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import { FakeProvider } from '#tests/helpers/fake_provider'

const REFUSED = [
  'javascript:alert(document.cookie)',
  'JavaScript:alert(1)',
  'data:text/html,<script>alert(1)</script>',
  '/pay/elsewhere',
  '//evil.example/checkout',
  'ftp://pay.example/checkout',
  'https://pay.example/check out',
  ' https://pay.example/checkout',
]

test.group('Provider pay_url: only an http(s) link is ever given to the payer', (group) => {
  const provider = new FakeProvider()
  group.setup(async () => {
    await provider.start()
    return () => provider.stop()
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await provider.configure()
    return () => {
      provider.payUrl = null
    }
  })

  test('a pay_url that is not an absolute http(s) address is refused, the order untouched', async ({
    client,
    assert,
  }) => {
    for (const payUrl of REFUSED) {
      provider.payUrl = payUrl
      const order = await newPlaceholder(client)
      const response = await switchTo(client, order.tradeId, 'provider')
      response.assertStatus(400)
      assert.equal(response.body().status_code, 400, payUrl)
      assert.equal(
        response.body().message,
        'The payment provider did not create a payment link: its pay_url is not an http(s) address, so the payer is not sent there',
        payUrl
      )
      assert.notInclude(JSON.stringify(response.body()), payUrl.trim())
      const stored = await Order.findOrFail(order.id)
      assert.equal(stored.status, 4)
      assert.equal(stored.paymentUrl, '')
      const record = await ProviderOrder.findByOrFail('unique_id', order.tradeId)
      assert.equal(record.status, 'failed')
      assert.equal(record.payUrl, '')
    }
  })

  test('an http or https pay_url is the payment_url', async ({ client, assert }) => {
    for (const payUrl of [
      'https://pay.example/checkout/1',
      'http://pay.example:8080/checkout?id=2',
    ]) {
      provider.payUrl = payUrl
      const order = await newPlaceholder(client)
      const response = await switchTo(client, order.tradeId, 'provider')
      response.assertStatus(200)
      assert.equal(response.body().data.payment_url, payUrl)
    }
  })

  test('a link stored before the check is never shown nor linked', async ({ client, assert }) => {
    const order = await newPlaceholder(client)
    ;(await switchTo(client, order.tradeId, 'provider')).assertStatus(200)
    await Order.query().where('id', order.id).update({ payment_url: 'javascript:alert(1)' })

    const init = await client.get(`/pay/checkout-counter-resp/${order.tradeId}`).accept('json')
    init.assertStatus(200)
    assert.equal(init.body().data.payment_url, '')
    const page = await client.get(`/cashier/${order.tradeId}`)
    page.assertStatus(200)
    assert.notInclude(page.text(), 'javascript:alert')
    const uri = await client.get(`/pay/payment-uri/${order.tradeId}`).accept('json')
    assert.notInclude(JSON.stringify(uri.body()), 'javascript:')
  })
})
