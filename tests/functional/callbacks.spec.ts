import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import { createHash } from 'node:crypto'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import Callback from '#models/callback'
import CallbackAttempt from '#models/callback_attempt'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import callbackDeliverer, { CallbackDeliverer } from '#callbacks/callback_deliverer'
import { isPrivateAddress } from '#callbacks/safe_http'
import { retryDelayMs } from '#callbacks/retry_policy'
import { countRows } from '#tests/helpers/database'
import { newOrder } from '#tests/helpers/orders'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { merchantForGroup, paidOrder } from '#tests/helpers/merchant_group'
import { TEST_SECRET, merchantVerifiesCallback } from '#tests/helpers/merchant'
import {
  compatParams,
  compatSigned,
  submitGet,
  tradeIdFromLocation,
} from '#tests/helpers/compat_merchant'
import { runAce } from '#tests/helpers/processes'
import { TRON_WALLET } from '#tests/helpers/merchant'

/** How an EPay plugin checks a compat callback. */
function merchantVerifiesCompat(query: URLSearchParams, secret = TEST_SECRET) {
  const params = Object.fromEntries(query)
  const text = Object.keys(params)
    .filter((key) => key !== 'sign' && key !== 'sign_type' && params[key] !== '')
    .sort()
    .map((key) => `${key}=${params[key]}`)
    .join('&')
  return (
    createHash('md5')
      .update(text + secret)
      .digest('hex') === params.sign
  )
}

test.group('Merchant callbacks: formats', (group) => {
  const merchant = merchantForGroup(group)

  test('native: POST JSON with exactly the spec fields, verifiable by the merchant', async ({
    client,
    assert,
  }) => {
    const order = await paidOrder(client, merchant, { order_id: 'shop-77', amount: 100 })
    const report = await callbackDeliverer.runOnce()
    assert.equal(report.delivered, 1)
    assert.lengthOf(merchant.requests, 1)
    const received = merchant.requests[0]
    assert.equal(received.method, 'POST')
    assert.equal(received.url, '/notify')
    const body = JSON.parse(received.body)
    assert.deepEqual(Object.keys(body).sort(), [
      'actual_amount',
      'amount',
      'block_transaction_id',
      'order_id',
      'pid',
      'receive_address',
      'signature',
      'status',
      'token',
      'trade_id',
    ])
    assert.deepInclude(body, {
      pid: '1000',
      trade_id: order.tradeId,
      order_id: 'shop-77',
      amount: 100,
      actual_amount: 13.8,
      receive_address: order.receiveAddress,
      token: 'USDT',
      block_transaction_id: `tx-${order.tradeId}`,
      status: 2,
    })
    assert.isTrue(merchantVerifiesCallback(body))
    assert.isFalse(merchantVerifiesCallback({ ...body, actual_amount: 13.7 }))
  })

  test('compat: GET with the EPay fields, MD5 verifiable by the plugin', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const response = await submitGet(
      client,
      compatSigned(
        compatParams({
          type: 'usdt.tron',
          money: '88.5',
          notify_url: merchant.notifyUrl,
          out_trade_no: 'EP-9',
        })
      )
    )
    const order = await Order.findByOrFail(
      'trade_id',
      tradeIdFromLocation(response.header('location'))
    )
    await paymentService.markPaid(order.id, { reference: 'tron-hash', source: 'scanner' })
    await callbackDeliverer.runOnce()

    assert.lengthOf(merchant.requests, 1)
    const received = merchant.requests[0]
    assert.equal(received.method, 'GET')
    const query = new URL(received.url, 'http://merchant').searchParams
    assert.deepEqual([...query.keys()].sort(), [
      'money',
      'name',
      'out_trade_no',
      'pid',
      'sign',
      'sign_type',
      'trade_no',
      'trade_status',
      'type',
    ])
    assert.equal(query.get('pid'), '1000')
    assert.equal(query.get('trade_no'), order.tradeId)
    assert.equal(query.get('out_trade_no'), 'EP-9')
    assert.equal(query.get('type'), 'usdt.tron')
    assert.equal(query.get('money'), '88.5000')
    assert.equal(query.get('trade_status'), 'TRADE_SUCCESS')
    assert.equal(query.get('sign_type'), 'MD5')
    assert.isTrue(merchantVerifiesCompat(query))
  })

  test('a native order created with payment_type Compat gets the compat format', async ({
    client,
    assert,
  }) => {
    await paidOrder(client, merchant, { payment_type: 'Compat' })
    await callbackDeliverer.runOnce()
    assert.equal(merchant.requests[0].method, 'GET')
    const query = new URL(merchant.requests[0].url, 'http://m').searchParams
    assert.equal(query.get('type'), 'alipay')
    assert.isTrue(merchantVerifiesCompat(query))
  })

  test('compat: type is sent as the order gave it, else alipay, and is signed', async ({
    client,
    assert,
  }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    const cases: [string | undefined, string][] = [
      [undefined, 'alipay'],
      ['ALIPAY', 'ALIPAY'],
      ['usdt.tron', 'usdt.tron'],
    ]
    for (const [type, expected] of cases) {
      merchant.reset()
      const response = await submitGet(
        client,
        compatSigned(
          compatParams({ type, token: 'usdt', network: 'tron', notify_url: merchant.notifyUrl })
        )
      )
      const order = await Order.findByOrFail(
        'trade_id',
        tradeIdFromLocation(response.header('location'))
      )
      await paymentService.markPaid(order.id, {
        reference: `tron-${order.tradeId}`,
        source: 'scanner',
      })
      await callbackDeliverer.runOnce()

      assert.lengthOf(merchant.requests, 1, String(type))
      const query = new URL(merchant.requests[0].url, 'http://merchant').searchParams
      assert.equal(query.get('type'), expected, String(type))
      assert.isTrue(merchantVerifiesCompat(query), String(type))
      // The signature covers type: another type does not verify.
      query.set('type', expected === 'alipay' ? 'wxpay' : 'alipay')
      assert.isFalse(merchantVerifiesCompat(query), String(type))
    }
  })

  test('acknowledged only by HTTP 200 with ok or success', async ({ client, assert }) => {
    const cases: [number, string, boolean][] = [
      [200, 'success', true],
      [200, '  OK\n', true],
      [200, 'SUCCESS', true],
      [200, 'fail', false],
      [200, '', false],
      [200, 'ok, thanks', false],
      [500, 'success', false],
      [201, 'ok', false],
    ]
    for (const [status, body, acknowledged] of cases) {
      merchant.reset([{ status, body }])
      const order = await paidOrder(client, merchant)
      await callbackDeliverer.runOnce()
      const callback = await Callback.findByOrFail('order_id', order.id)
      assert.equal(
        callback.status,
        acknowledged ? 'delivered' : 'pending',
        `${status} ${JSON.stringify(body)}`
      )
    }
  })
})

test.group('Merchant callbacks: retries and persistence', (group) => {
  const merchant = merchantForGroup(group)

  test('a merchant failing twice then succeeding: three attempts recorded, backoff between', async ({
    client,
    assert,
  }) => {
    // A base long enough that "not due yet" holds however slow the machine; the waits
    // themselves are then skipped by moving the callback's due time to now (as time passing would).
    await settings.set('callback_retry_base_seconds', '60')
    merchant.reset([
      { status: 500, body: 'boom' },
      { status: 200, body: 'not yet' },
      { status: 200, body: 'ok' },
    ])
    const order = await paidOrder(client, merchant)
    const callback = async () => Callback.findByOrFail('order_id', order.id)
    const attempt = async (number: number) =>
      CallbackAttempt.query()
        .where('callback_id', (await callback()).id)
        .where('attempt', number)
        .firstOrFail()
    const dueNow = () =>
      db.from('callbacks').where('order_id', order.id).update({ next_attempt_at: Date.now() })
    /**
     * The delay the deliverer chose, bounded by its own clock readings: it is
     * picked after the attempt's answer (started_at + duration_ms) and before
     * the outcome is written (updated_at), so a slow machine cannot move it
     * out of [min, max].
     */
    const assertDelay = async (number: number, min: number, max: number) => {
      const row = await callback()
      const tried = await attempt(number)
      assert.equal(row.attempts, number)
      assert.isAtLeast(row.nextAttemptAt - (tried.startedAt + tried.durationMs), min)
      assert.isAtMost(row.nextAttemptAt - row.updatedAt, max)
    }

    await callbackDeliverer.runOnce()
    assert.equal((await callback()).status, 'pending')
    // 60 s, jittered down by up to 20 %
    await assertDelay(1, 48_000, 60_000)
    // not due yet: nothing is sent
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)

    await dueNow()
    await callbackDeliverer.runOnce()
    assert.equal((await callback()).status, 'pending')
    // doubled: 120 s, jittered down by up to 20 %
    await assertDelay(2, 96_000, 120_000)
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 2)

    await dueNow()
    await callbackDeliverer.runOnce()
    const done = await callback()
    assert.equal(done.status, 'delivered')
    assert.isNotNull(done.deliveredAt)
    const attempts = await CallbackAttempt.query().where('callback_id', done.id).orderBy('attempt')
    assert.deepEqual(
      attempts.map((recorded) => [
        recorded.attempt,
        recorded.httpStatus,
        recorded.responseExcerpt,
        recorded.acknowledged,
      ]),
      [
        [1, 500, 'boom', false],
        [2, 200, 'not yet', false],
        [3, 200, 'ok', true],
      ]
    )
    for (const recorded of attempts) {
      assert.equal(recorded.url, merchant.notifyUrl)
      assert.equal(recorded.method, 'POST')
      assert.isAtLeast(recorded.durationMs, 0)
    }
    assert.match(attempts[1].error, /not acknowledged/)
    const stored = await Order.findOrFail(order.id)
    assert.equal(stored.callbackStatus, 'delivered')
    assert.equal(stored.callbackAttempts, 3)
  }).timeout(20_000)

  test('gives up after order_notice_max_retry retries', async ({ client, assert }) => {
    await settings.set('order_notice_max_retry', '2')
    await settings.set('callback_retry_base_seconds', '1')
    merchant.reset([{ status: 503, body: 'down' }])
    const order = await paidOrder(client, merchant)
    for (let round = 0; round < 3; round++) {
      await db.from('callbacks').update({ next_attempt_at: 0 })
      await callbackDeliverer.runOnce()
    }
    const callback = await Callback.findByOrFail('order_id', order.id)
    assert.equal(callback.status, 'failed')
    assert.equal(callback.attempts, 3)
    await db.from('callbacks').update({ next_attempt_at: 0 })
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 3)
    assert.equal((await Order.findOrFail(order.id)).callbackStatus, 'failed')
  })

  test('the retry delays: base × 2^(n−1), capped at 300 s, jittered downwards', ({ assert }) => {
    const top = () => 0.9999999
    assert.equal(retryDelayMs(1, 5, top), 5000)
    assert.equal(retryDelayMs(2, 5, top), 10000)
    assert.equal(retryDelayMs(6, 5, top), 160000)
    assert.equal(retryDelayMs(7, 5, top), 300000)
    assert.equal(retryDelayMs(20, 5, top), 300000)
    assert.equal(
      retryDelayMs(1, 5, () => 0),
      4000
    )
  })

  test('a restart mid-retry loses nothing: another process delivers it', async ({
    client,
    assert,
  }) => {
    await settings.set('callback_retry_base_seconds', '1')
    merchant.reset([
      { status: 500, body: 'boom' },
      { status: 200, body: 'success' },
    ])
    const order = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    assert.equal((await Callback.findByOrFail('order_id', order.id)).status, 'pending')

    await new Promise((resolve) => setTimeout(resolve, 1100))
    const result = await runAce(['callbacks:deliver'])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /1 delivered/)
    assert.equal((await Callback.findByOrFail('order_id', order.id)).status, 'delivered')
    assert.lengthOf(merchant.requests, 2)
  }).timeout(30_000)

  test('a worker that died mid-delivery: its lease expires and the callback is sent', async ({
    client,
    assert,
  }) => {
    const order = await paidOrder(client, merchant)
    await db
      .from('callbacks')
      .update({ locked_by: 'dead-worker', locked_until: Date.now() + 60_000 })
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 0)
    await db.from('callbacks').update({ locked_until: Date.now() - 1 })
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
    assert.equal((await Callback.findByOrFail('order_id', order.id)).status, 'delivered')
  })

  test('two workers at once never send one callback twice', async ({ client, assert }) => {
    merchant.reset([{ status: 200, body: 'ok', delayMs: 50 }])
    for (let index = 0; index < 30; index++) await paidOrder(client, merchant)
    const other = new CallbackDeliverer()
    const reports = await Promise.all([
      callbackDeliverer.drain(),
      other.drain(),
      callbackDeliverer.drain(),
    ])
    assert.equal(
      reports.reduce((sum, report) => sum + report.delivered, 0),
      30
    )
    const seen = merchant.requests.map((request) => JSON.parse(request.body).trade_id)
    assert.lengthOf(seen, 30)
    assert.equal(new Set(seen).size, 30)
  }).timeout(30_000)

  test('a merchant that hangs times out and is retried later', async ({ client, assert }) => {
    await settings.set('callbacks.timeout_seconds', '1')
    const order = await paidOrder(client, merchant)
    // The merchant answers only once the attempt is over: only the timeout can have ended it.
    merchant.hold()
    await callbackDeliverer.runOnce()
    assert.equal(merchant.heldCount, 1, 'the answer is still held')
    merchant.release()
    const attempt = await CallbackAttempt.findByOrFail(
      'callback_id',
      (await Callback.findByOrFail('order_id', order.id)).id
    )
    assert.match(attempt.error, /timed out/)
    assert.equal((await Callback.findByOrFail('order_id', order.id)).status, 'pending')
  }).timeout(10_000)

  test('callbacks:redeliver sends a delivered callback again', async ({ client, assert }) => {
    const order = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    const result = await runAce(['callbacks:redeliver', order.tradeId])
    assert.equal(result.code, 0, result.stderr)
    assert.lengthOf(merchant.requests, 2)
    const refused = await runAce(['callbacks:redeliver', 'NoSuchOrder'])
    assert.equal(refused.code, 1)
    const unpaid = await newOrder(client)
    const notPaid = await runAce(['callbacks:redeliver', unpaid.tradeId])
    assert.equal(notPaid.code, 1)
    assert.match(notPaid.stderr, /not paid/)
  }).timeout(60_000)
})

test.group('Merchant callbacks: target safety', (group) => {
  const merchant = merchantForGroup(group)

  test('private, loopback and link-local addresses are refused by default', async ({
    client,
    assert,
  }) => {
    await settings.set('callbacks.allow_private_targets', 'false')
    const byIp = await paidOrder(client, merchant)
    const byName = await paidOrder(client, merchant, {
      notify_url: merchant.notifyUrl.replace('127.0.0.1', 'localhost'),
    })
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 0)
    for (const order of [byIp, byName]) {
      const callback = await Callback.findByOrFail('order_id', order.id)
      assert.equal(callback.status, 'failed')
      assert.match(callback.lastError, /private or loopback/)
      assert.equal(await countRows('callback_attempts', { callback_id: callback.id }), 1)
    }
  })

  test('NAT64, 6to4, Teredo and IPv4-compatible targets are refused without a connection', async ({
    client,
    assert,
  }) => {
    await settings.set('callbacks.allow_private_targets', 'false')
    const port = new URL(merchant.url).port
    // Each embeds 127.0.0.1 (7f00:0001) the way its range does.
    const targets = [
      '64:ff9b::7f00:1',
      '64:ff9b:1::7f00:1',
      '2002:7f00:1::1',
      '2001:0:7f00:1::1',
      '::7f00:1',
    ]
    const orders = []
    for (const address of targets) {
      orders.push(
        await paidOrder(client, merchant, { notify_url: `http://[${address}]:${port}/notify` })
      )
    }
    const report = await callbackDeliverer.runOnce()
    assert.equal(report.failed, targets.length)
    assert.lengthOf(merchant.requests, 0)
    for (const order of orders) {
      const callback = await Callback.findByOrFail('order_id', order.id)
      assert.equal(callback.status, 'failed')
      assert.match(callback.lastError, /private or loopback/)
      const attempt = await CallbackAttempt.findByOrFail('callback_id', callback.id)
      assert.isNull(attempt.httpStatus)
    }
  })

  test('a redirect from the merchant is not followed and is not an acknowledgement', async ({
    client,
    assert,
  }) => {
    await settings.set('callbacks.allow_private_targets', 'true')
    const elsewhere = new MerchantServer()
    await elsewhere.start()
    try {
      merchant.reset([{ status: 302, body: 'success', headers: { location: elsewhere.notifyUrl } }])
      const order = await paidOrder(client, merchant)
      const report = await callbackDeliverer.runOnce()
      assert.equal(report.delivered, 0)
      assert.equal(report.retrying, 1)
      assert.lengthOf(merchant.requests, 1)
      assert.lengthOf(elsewhere.requests, 0)
      const callback = await Callback.findByOrFail('order_id', order.id)
      assert.equal(callback.status, 'pending')
      assert.isNull(callback.deliveredAt)
      assert.equal(callback.lastHttpStatus, 302)
      assert.match(callback.lastError, /not acknowledged: HTTP 302/)
      assert.equal((await Order.findOrFail(order.id)).callbackStatus, 'pending')
    } finally {
      await elsewhere.stop()
    }
  })

  test('allowed by callbacks.allow_private_targets', async ({ client, assert }) => {
    await settings.set('callbacks.allow_private_targets', 'true')
    await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    assert.lengthOf(merchant.requests, 1)
  })

  test('address classification', ({ assert }) => {
    for (const address of [
      '127.0.0.1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      'fe80::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '224.0.0.1',
    ]) {
      assert.isTrue(isPrivateAddress(address), address)
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) {
      assert.isFalse(isPrivateAddress(address), address)
    }
  })
})
