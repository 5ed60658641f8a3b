import rateAdmin from '#services/operators/rate_admin'
import chainAdmin from '#services/operators/chain_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Rate from '#models/rate'
import chainScanner from '#services/chain_scanner'
import providerCheckout from '#payments/provider_checkout'
import callbackDeliverer from '#callbacks/callback_deliverer'
import BusinessError from '#exceptions/business_error'
import { Decimal, ceilToPrecision, toDecimalString } from '#support/text/money'
import { countRows } from '#tests/helpers/database'
import { switchTo } from '#tests/helpers/orders'
import { FAKE_NETWORK, FAKE_USDT, FAKE_WALLET, fakeFamily } from '#tests/helpers/fake_chain'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import {
  CREATE_PATH,
  createOrder,
  merchantVerifiesCallback,
  orderParams,
  signed,
} from '#tests/helpers/merchant'
import { compatParams, compatSigned, submitGet } from '#tests/helpers/compat_merchant'

/** The fiat amount priced at 7.25 CNY/USDT and precision 6 gives 15 significant digits. */
const FIAT = '999999999.9999'
const CRYPTO = ceilToPrecision(new Decimal(FIAT).dividedBy('7.25'), 6).toFixed()

/** POSTs a signed JSON create and returns the answer's raw text as well. */
async function createRaw(params: Record<string, unknown>) {
  const response = await fetch(`${process.env.APP_URL}${CREATE_PATH}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'accept': 'application/json' },
    body: JSON.stringify(signed(params)),
  })
  const text = await response.text()
  return { status: response.status, text, body: JSON.parse(text) }
}

/** A money column as stored, read without the model (SQLite: a number; PostgreSQL: a string). */
async function stored(table: string, column: string, where: Record<string, unknown>) {
  const row = await db.from(table).where(where).select(column).firstOrFail()
  return toDecimalString(row[column])
}

function transfer(reference: string, amount: string) {
  return {
    reference,
    position: 'log:0',
    to: FAKE_WALLET,
    contract: FAKE_USDT,
    amount,
    timestamp: Date.now(),
    confirmations: 5,
    success: true,
  }
}

test.group('Exact amounts', (group) => {
  const merchant = merchantForGroup(group)
  group.each.setup(async () => {
    await chainAdmin.setToken(FAKE_NETWORK, 'USDT', { precision: 6 })
  })

  test('15 significant digits round-trip exactly: create → database → answers → payment → callback', async ({
    assert,
  }) => {
    assert.equal(CRYPTO, '137931034.482745')
    const created = await createRaw(
      orderParams({
        network: FAKE_NETWORK,
        token: 'usdt',
        amount: FIAT,
        notify_url: merchant.notifyUrl,
      })
    )
    assert.equal(created.status, 200, created.text)
    assert.include(created.text, `"actual_amount":${CRYPTO},`)
    assert.include(created.text, `"amount":${FIAT},`)
    const tradeId = created.body.data.trade_id

    // In the database, exactly (SQLite keeps it as a double, PostgreSQL as NUMERIC).
    assert.equal(await stored('orders', 'actual_amount', { trade_id: tradeId }), CRYPTO)
    assert.equal(await stored('orders', 'amount', { trade_id: tradeId }), FIAT)
    const order = await Order.findByOrFail('trade_id', tradeId)
    assert.equal(order.actualAmount, CRYPTO)
    assert.equal(await stored('amount_locks', 'amount', { order_id: order.id }), CRYPTO)

    // The cashier shows it exactly.
    const cashier = await fetch(`${process.env.APP_URL}/pay/checkout-counter-resp/${tradeId}`)
    assert.include(await cashier.text(), `"actual_amount":${CRYPTO},`)

    // One unit less does not pay it; the exact amount does.
    const short = new Decimal(CRYPTO).minus('0.000001').toFixed()
    fakeFamily.pending = [transfer('tx-short', short), transfer('tx-exact', CRYPTO)]
    await chainScanner.scan({ network: FAKE_NETWORK })
    await order.refresh()
    assert.equal(order.status, 2)
    assert.equal(order.blockTransactionId, 'tx-exact')
    assert.equal(await stored('unmatched_payments', 'amount', { reference: 'tx-short' }), short)

    // The callback carries it exactly, and the merchant's check of the signature passes.
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
    const body = merchant.requests[0].body
    assert.include(body, `"actual_amount":${CRYPTO},`)
    assert.include(body, `"amount":${FIAT},`)
    assert.isTrue(merchantVerifiesCallback(JSON.parse(body)))
  })

  test('a crypto amount beyond 15 significant digits is refused with 10004; nothing is written', async ({
    client,
    assert,
  }) => {
    // A tiny rate: 9999999999.9999 CNY would be 9999999999999900 USDT.
    await rateAdmin.set('USDT', 'CNY', '0.000001')
    const tiny = await createOrder(
      client,
      orderParams({ network: FAKE_NETWORK, token: 'usdt', amount: '9999999999.9999' })
    )
    tiny.assertStatus(400)
    assert.equal(tiny.body().status_code, 10004)
    assert.include(tiny.body().message, '9999999999999900 USDT')
    assert.match(tiny.body().message, /16 significant digits; amounts are kept exactly up to 15/)

    // Many decimals: 9999999999.9999 CNY at 7.25 and precision 6 is 1379310344.827573 (16 digits).
    await rateAdmin.set('USDT', 'CNY', '7.25')
    const decimals = await createOrder(
      client,
      orderParams({ network: FAKE_NETWORK, token: 'usdt', amount: '9999999999.9999' })
    )
    assert.equal(decimals.body().status_code, 10004)
    assert.include(decimals.body().message, '1379310344.827573 USDT')

    // The compat flavour says the same.
    const compat = await submitGet(
      client,
      compatSigned(compatParams({ money: '9999999999.9999', token: 'usdt', network: FAKE_NETWORK }))
    )
    compat.assertStatus(400)
    assert.equal(compat.body().status_code, 10004)

    assert.equal(await countRows('orders'), 0)
    assert.equal(await countRows('amount_locks'), 0)
  })

  test('a step that would need a 16th digit is refused with 10004; nothing is written', async ({
    client,
    assert,
  }) => {
    // 7250000000 CNY at 7.25 is exactly 1000000000 USDT; the next step is 1000000000.000001.
    const first = await createOrder(
      client,
      orderParams({ network: FAKE_NETWORK, token: 'usdt', amount: '7250000000' })
    )
    first.assertStatus(200)
    assert.equal(first.body().data.actual_amount, 1000000000)

    const second = await createOrder(
      client,
      orderParams({ network: FAKE_NETWORK, token: 'usdt', amount: '7250000000' })
    )
    second.assertStatus(400)
    assert.equal(second.body().status_code, 10004)
    assert.include(second.body().message, '1000000000.000001 USDT')
    assert.equal(await countRows('orders'), 1)
    assert.equal(await countRows('amount_locks'), 1)
  })

  test('switching a placeholder to an amount beyond the bound is refused; the order is unchanged', async ({
    client,
    assert,
  }) => {
    await rateAdmin.set('USDT', 'CNY', '0.000001')
    const created = await createOrder(
      client,
      orderParams({ network: undefined, token: undefined, amount: '9999999999.9999' })
    )
    created.assertStatus(200)
    const tradeId = created.body().data.trade_id
    const switched = await switchTo(client, tradeId, FAKE_NETWORK)
    assert.equal(switched.body().status_code, 10004)
    const order = await Order.findByOrFail('trade_id', tradeId)
    assert.equal(order.status, 4)
    assert.equal(order.actualAmount, '0')
    assert.equal(await countRows('amount_locks'), 0)
  })

  test('the provider quote is refused beyond the bound too', async ({ assert }) => {
    await rateAdmin.set('USDT', 'CNY', '0.000001')
    try {
      await providerCheckout.quote({ amount: '9999999999.9999', currency: 'CNY' }, 'USDT')
      assert.fail('the quote was accepted')
    } catch (error) {
      assert.instanceOf(error, BusinessError)
      assert.equal((error as BusinessError).businessCode, 10004)
    }
    assert.equal(
      await providerCheckout.quote({ amount: '100', currency: 'CNY' }, 'USDT'),
      '100000000.00'
    )
  })

  test('money columns written through the models refuse what they could not keep exactly', async ({
    assert,
  }) => {
    await assert.rejects(
      () => Rate.create({ token: 'ABC', fiat: 'CNY', rate: '0.1234567890123456', source: 'fixed' }),
      /more than 15 significant digits/
    )
    assert.equal(await countRows('rates', { token: 'ABC' }), 0)
    const kept = await Rate.create({
      token: 'ABC',
      fiat: 'CNY',
      rate: '123.450000',
      source: 'fixed',
    })
    await kept.refresh()
    assert.equal(kept.rate, '123.45')
  })
})
