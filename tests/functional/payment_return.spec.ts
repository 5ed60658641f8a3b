import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import { createHash } from 'node:crypto'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, fakeTransfer } from '#tests/helpers/fake_chain'
import { TEST_SECRET } from '#tests/helpers/merchant'
import { newOrder, prepareLifecycle, switchTo } from '#tests/helpers/orders'
import {
  compatParams,
  compatSigned,
  submitGet,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'
import ProviderOrder from '#models/provider_order'
import { FakeProvider, providerNotification } from '#tests/helpers/fake_provider'

/** GET without following redirects: status and Location. */
async function returnOf(tradeId: string) {
  const response = await fetch(`${process.env.APP_URL}/pay/return/${tradeId}`, {
    redirect: 'manual',
  })
  return { status: response.status, location: response.headers.get('location') ?? '' }
}

/**
 * What an EPay shop plugin does on its return page: take the query, drop
 * sign and sign_type and empty values, sort, join unencoded, append the
 * key, MD5 — written from the EPay rule, not with the server's code.
 */
function shopVerifiesReturn(url: string, secret = TEST_SECRET) {
  const params = Object.fromEntries(new URL(url).searchParams)
  const text = Object.keys(params)
    .filter((key) => key !== 'sign' && key !== 'sign_type' && params[key] !== '')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return {
    params,
    valid:
      createHash('md5')
        .update(text + secret)
        .digest('hex') === params.sign,
  }
}

async function compatOrder(client: any, overrides: Record<string, string> = {}) {
  const response = await submitGet(
    client,
    compatSigned(
      compatParams({
        type: `usdt.${FAKE_NETWORK}`,
        return_url: 'https://shop.example/epay/return.php',
        ...overrides,
      })
    )
  )
  if (response.status() !== 302) throw new Error(JSON.stringify(response.body()))
  return Order.findByOrFail('trade_id', tradeIdFromLocation(response.header('location')))
}

/** The payer reports the transaction in the cashier; the fake chain confirms it. */
async function payOverHttp(client: any, order: Order, reference: string) {
  fakeTransfer(reference, order.actualAmount, { to: order.receiveAddress })
  const response = await client
    .post(`/pay/submit-tx-hash/${order.tradeId}`)
    .json({ block_transaction_id: reference })
  if (response.body().status_code !== 200) throw new Error(JSON.stringify(response.body()))
}

test.group('Return to the shop: GET /pay/return/{trade_id}', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('compat order paid end to end: 302 to return_url with EPay fields whose MD5 sign verifies', async ({
    client,
    assert,
  }) => {
    const order = await compatOrder(client, {
      out_trade_no: 'EP-2001',
      name: 'Blue mug',
      money: '100.00',
    })
    await payOverHttp(client, order, 'tx-return-1')

    const { status, location } = await returnOf(order.tradeId)
    assert.equal(status, 302)
    assert.isTrue(location.startsWith('https://shop.example/epay/return.php?'))
    const { params, valid } = shopVerifiesReturn(location)
    assert.isTrue(valid)
    assert.deepEqual(params, {
      pid: '1000',
      trade_no: order.tradeId,
      out_trade_no: 'EP-2001',
      type: `usdt.${FAKE_NETWORK}`,
      name: 'Blue mug',
      money: '100.0000',
      trade_status: 'TRADE_SUCCESS',
      sign: params.sign,
      sign_type: 'MD5',
    })
    // the wrong key does not verify it: the check is real
    assert.isFalse(shopVerifiesReturn(location, 'another-secret').valid)
  })

  test('the return carries exactly the fields of the compat callback', async ({
    client,
    assert,
  }) => {
    const order = await compatOrder(client)
    await payOverHttp(client, order, 'tx-return-2')
    const { default: callbackFormats } = await import('#callbacks/callback_format')
    const { default: ApiKey } = await import('#models/api_key')
    const apiKey = await ApiKey.findByOrFail('pid', '1000')
    const callback = callbackFormats.get('compat').build(await Order.findOrFail(order.id), apiKey)
    const { location } = await returnOf(order.tradeId)
    assert.equal(new URL(location).search, new URL(callback.url).search)
  })

  test('a return_url with its own query keeps it and gets the fields after &', async ({
    client,
    assert,
  }) => {
    const order = await compatOrder(client, {
      return_url: 'https://shop.example/index.php?route=epay/return',
    })
    await payOverHttp(client, order, 'tx-return-3')
    const { location } = await returnOf(order.tradeId)
    assert.match(
      location,
      /^https:\/\/shop\.example\/index\.php\?route=epay%2Freturn&pid=1000&|^https:\/\/shop\.example\/index\.php\?route=epay\/return&pid=1000&/
    )
    const { params, valid } = shopVerifiesReturn(
      location.replace('route=epay/return&', '').replace('route=epay%2Freturn&', '')
    )
    assert.isTrue(valid)
    assert.equal(params.trade_status, 'TRADE_SUCCESS')
  })

  test('before payment the payer goes back to the cashier', async ({ client, assert }) => {
    const order = await compatOrder(client)
    assert.deepEqual(await returnOf(order.tradeId), {
      status: 302,
      location: `/cashier/${order.tradeId}`,
    })
    order.merge({ status: 3 })
    await order.save()
    assert.deepEqual(await returnOf(order.tradeId), {
      status: 302,
      location: `/cashier/${order.tradeId}`,
    })
  })

  test('native orders return to redirect_url as given, once paid', async ({ client, assert }) => {
    const order = await newOrder(client, { redirect_url: 'https://shop.example/thanks?order=A-1' })
    assert.equal((await returnOf(order.tradeId)).location, `/cashier/${order.tradeId}`)
    await payOverHttp(client, order, 'tx-return-4')
    assert.deepEqual(await returnOf(order.tradeId), {
      status: 302,
      location: 'https://shop.example/thanks?order=A-1',
    })
  })

  test('native order with payment_type Compat gets the signed compat return', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, {
      payment_type: 'Compat',
      redirect_url: 'https://shop.example/r',
    })
    await payOverHttp(client, order, 'tx-return-5')
    const { location } = await returnOf(order.tradeId)
    assert.isTrue(shopVerifiesReturn(location).valid)
  })

  test('without a return address a paid order stays on the cashier', async ({ client, assert }) => {
    const order = await newOrder(client)
    await payOverHttp(client, order, 'tx-return-6')
    assert.equal((await returnOf(order.tradeId)).location, `/cashier/${order.tradeId}`)
  })

  test('a paid child returns with its parent, the order the shop knows', async ({
    client,
    assert,
  }) => {
    await chainAdmin.setToken(FAKE_NETWORK, 'USDC', {
      contract: 'fake:usdc-contract',
      decimals: 6,
      precision: 2,
    })
    await rateAdmin.set('USDC', 'CNY', '7.25')
    const parent = await compatOrder(client, { out_trade_no: 'EP-3001' })
    const switched = await switchTo(client, parent.tradeId, FAKE_NETWORK, 'usdc')
    const child = await Order.findByOrFail('trade_id', switched.body().data.trade_id)
    assert.notEqual(child.tradeId, parent.tradeId)
    await paymentService.markPaid(child.id, {
      reference: 'tx-child-1',
      source: 'scanner',
      paidAt: Date.now(),
    })

    const { location } = await returnOf(child.tradeId)
    const { params, valid } = shopVerifiesReturn(location)
    assert.isTrue(valid)
    assert.equal(params.trade_no, parent.tradeId)
    assert.equal(params.out_trade_no, 'EP-3001')
  })

  test('an unknown trade_id ends on the not-found page', async ({ assert }) => {
    const { status, location } = await returnOf('AAAAAAAAAAAAAAAAAAAAAA')
    assert.equal(status, 302)
    const page = await fetch(`${process.env.APP_URL}${location}`)
    assert.equal(page.status, 404)
  })
})

test.group('Return to the shop after paying at the hosted provider', (group) => {
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

  test("an EPay shop's payer comes back through /pay/return: the cashier until the notification, then return_url signed for verifyReturn", async ({
    client,
    assert,
  }) => {
    // A compat placeholder (no type, no defaults), paid at the provider.
    const created = await submitGet(
      client,
      compatSigned(
        compatParams({
          out_trade_no: 'EP-PROV',
          return_url: 'https://shop.example/epay/return.php',
        })
      )
    )
    const tradeId = tradeIdFromLocation(created.header('location'))
    ;(await switchTo(client, tradeId, 'provider', 'usdt')).assertStatus(200)
    const returnUrl = provider.linkRequest(tradeId)!.return_url
    assert.equal(returnUrl, `${process.env.APP_URL}/pay/return/${tradeId}`)

    // Back before the provider's notification: the cashier, which waits for it.
    const early = await fetch(returnUrl, { redirect: 'manual' })
    assert.equal(early.status, 302)
    assert.equal(early.headers.get('location'), `/cashier/${tradeId}`)

    const ref = (await ProviderOrder.findByOrFail('unique_id', tradeId)).providerOrderId
    const notified = await fetch(`${process.env.APP_URL}/payments/provider/v1/notify`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(providerNotification(tradeId, ref)).toString(),
    })
    assert.equal(await notified.text(), 'success')

    const back = await fetch(returnUrl, { redirect: 'manual' })
    assert.equal(back.status, 302)
    const location = back.headers.get('location')!
    assert.isTrue(location.startsWith('https://shop.example/epay/return.php?'))
    const { params, valid } = shopVerifiesReturn(location)
    assert.isTrue(valid, 'verifyReturn passes')
    assert.equal(params.out_trade_no, 'EP-PROV')
    assert.equal(params.trade_status, 'TRADE_SUCCESS')
  })

  test('a native order without redirect_url: the provider gets no return page of ours (its own fallbacks apply)', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { token: undefined, network: undefined })
    ;(await switchTo(client, order.tradeId, 'provider', 'usdt')).assertStatus(200)
    assert.equal(
      provider.linkRequest(order.tradeId)!.return_url,
      `${process.env.APP_URL}/pay/checkout-counter/${order.tradeId}`
    )
  })
})
