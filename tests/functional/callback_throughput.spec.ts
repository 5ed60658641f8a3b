import { test } from '@japa/runner'
import type { ApiClient } from '@japa/api-client'
import db from '@adonisjs/lucid/services/db'
import Callback from '#models/callback'
import type Order from '#models/order'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import callbackOutbox from '#callbacks/callback_outbox'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { DeliveryLoop, callbackDelivery } from '#callbacks/delivery_loop'
import { ForbiddenTargetError, closeCallbackAgents, safeRequest } from '#callbacks/safe_http'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { MerchantServer } from '#tests/helpers/merchant_server'

/**
 * A merchant that also counts the most requests it had open at once. With
 * `answerInRounds(n)` it holds its answers until n requests are open, then
 * answers them together: the sender must reach n requests in flight (it
 * cannot get through with fewer, however the machine schedules it), and
 * maxOpen tells whether it ever went past.
 */
class CountingMerchant extends MerchantServer {
  open = 0
  maxOpen = 0
  #round = 0

  constructor() {
    super()
    const answer = this.handler
    this.handler = (request, response, body) => {
      this.open++
      this.maxOpen = Math.max(this.maxOpen, this.open)
      response.once('close', () => this.open--)
      answer(request, response, body)
      if (this.#round > 0 && this.heldCount >= this.#round) {
        this.release()
        this.hold()
      }
    }
  }

  answerInRounds(size: number) {
    this.#round = size
    this.hold()
  }

  resetCounts(replies?: MerchantServer['replies']) {
    this.#round = 0
    this.reset(replies)
    this.open = 0
    this.maxOpen = 0
  }
}

/** Polls `condition` every 10 ms until it holds; fails after `timeoutMs`. */
async function until(
  condition: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  what = 'condition'
) {
  const started = Date.now()
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs)
      throw new Error(`${what}: not reached within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

async function paidOrders(
  client: ApiClient,
  url: string,
  count: number,
  offset = 0
): Promise<Order[]> {
  const orders: Order[] = []
  for (let index = 0; index < count; index++) {
    const order = await newOrder(client, { notify_url: url, amount: 100 + offset + index })
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })
    orders.push(order)
  }
  return orders
}

async function delivered(orders: Order[]): Promise<number> {
  const [{ total }] = await db
    .from('callbacks')
    .whereIn(
      'order_id',
      orders.map((order) => order.id)
    )
    .where('status', 'delivered')
    .count('* as total')
  return Number(total)
}

test.group('Merchant callbacks: delivery loop', (group) => {
  const fast = new CountingMerchant()
  const slow = new CountingMerchant()
  let loop: DeliveryLoop | null = null

  group.setup(async () => {
    await fast.start()
    await slow.start()
    return async () => {
      await fast.stop()
      await slow.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    fast.resetCounts()
    slow.resetCounts()
    return async () => {
      // Nothing held back keeps a stopping loop waiting.
      fast.resetCounts()
      slow.resetCounts()
      await loop?.stop()
      loop = null
      await callbackDelivery.stop()
    }
  })

  test('a slow merchant does not delay a fast one', async ({ client, assert }) => {
    await settings.set('callbacks.concurrency', '6')
    await settings.set('callbacks.per_host_concurrency', '2')
    await settings.set('callbacks.timeout_seconds', '30')
    // The slow merchant answers only when the test says so.
    slow.resetCounts([{ status: 200, body: 'ok' }])
    slow.hold()
    // The slow merchant's callbacks are due first, more of them than there are slots.
    const slowOrders = await paidOrders(client, slow.notifyUrl, 8)
    const fastOrders = await paidOrders(client, fast.notifyUrl, 10, 100)

    loop = new DeliveryLoop(callbackDeliverer)
    void loop.run()
    await until(
      async () => (await delivered(fastOrders)) === fastOrders.length,
      15_000,
      'fast callbacks delivered'
    )
    // Acknowledged while every slow answer is still held.
    assert.equal(await delivered(slowOrders), 0)
    await until(() => slow.heldCount === 2, 10_000, "the slow merchant's two slots in use")
    assert.isAtMost(slow.maxOpen, 2)

    // Stopping waits for the slow answers in flight and gives back the rest, unsent and unleased.
    const stopped = loop.stop()
    loop = null
    slow.release()
    await stopped
    assert.equal(await delivered(slowOrders), 2)
    assert.lengthOf(slow.requests, 2)
    const left = await db
      .from('callbacks')
      .whereIn(
        'order_id',
        slowOrders.map((order) => order.id)
      )
      .where('status', 'pending')
    assert.lengthOf(left, 6)
    for (const row of left) {
      assert.isNull(row.locked_by)
      assert.equal(Number(row.attempts), 0)
    }
  }).timeout(60_000)

  test('no more than callbacks.concurrency requests in flight', async ({ client, assert }) => {
    await settings.set('callbacks.concurrency', '5')
    await settings.set('callbacks.per_host_concurrency', '100')
    fast.resetCounts([{ status: 200, body: 'ok' }])
    const orders = await paidOrders(client, fast.notifyUrl, 25)
    // Answered five at a time: the loop must have five in flight to go on.
    fast.answerInRounds(5)
    const report = await callbackDeliverer.drain()
    assert.equal(report.delivered, 25)
    assert.equal(await delivered(orders), 25)
    assert.equal(fast.maxOpen, 5)
  }).timeout(60_000)

  test('no more than callbacks.per_host_concurrency requests to one merchant', async ({
    client,
    assert,
  }) => {
    await settings.set('callbacks.concurrency', '20')
    await settings.set('callbacks.per_host_concurrency', '3')
    fast.resetCounts([{ status: 200, body: 'ok' }])
    slow.resetCounts([{ status: 200, body: 'ok' }])
    const one = await paidOrders(client, fast.notifyUrl, 15)
    const other = await paidOrders(client, slow.notifyUrl, 15, 100)
    // Each answers three at a time: each must get its three slots to go on.
    fast.answerInRounds(3)
    slow.answerInRounds(3)
    const report = await callbackDeliverer.drain()
    assert.equal(report.delivered, 30)
    assert.equal(await delivered([...one, ...other]), 30)
    assert.equal(fast.maxOpen, 3)
    assert.equal(slow.maxOpen, 3)
    // Nothing was left claimed (a callback given back or waiting has its lease released or used).
    assert.equal(
      Number((await db.from('callbacks').whereNotNull('locked_by').count('* as n'))[0].n),
      0
    )
  }).timeout(60_000)

  test('connections are kept alive and reused', async ({ client, assert }) => {
    await settings.set('callbacks.concurrency', '4')
    await settings.set('callbacks.per_host_concurrency', '2')
    await closeCallbackAgents()
    const connections = new Set<string>()
    fast.resetCounts()
    const answer = fast.handler
    fast.handler = (request, response, body) => {
      connections.add(`${request.socket.remotePort}`)
      answer(request, response, body)
    }
    try {
      const orders = await paidOrders(client, fast.notifyUrl, 20)
      await callbackDeliverer.drain()
      assert.equal(await delivered(orders), 20)
      assert.lengthOf(fast.requests, 20)
      // A connection per request without keep-alive; here a few serve them all.
      assert.isBelow(connections.size, fast.requests.length / 2)
    } finally {
      fast.handler = answer
    }
  }).timeout(60_000)

  test('a callback is sent when its payment commits, not at the next poll', async ({
    client,
    assert,
  }) => {
    // A poll so rare that only the wake-up can explain a prompt delivery.
    await callbackDelivery.start({ pollMs: 600_000 })
    const order = await newOrder(client, { notify_url: fast.notifyUrl })
    const started = Date.now()
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })
    await until(async () => (await delivered([order])) === 1, 20_000, 'callback delivered')
    assert.isBelow(Date.now() - started, 10_000)
    assert.lengthOf(fast.requests, 1)
  }).timeout(30_000)

  test('a paying transaction rolled back sends nothing', async ({ client, assert }) => {
    await callbackDelivery.start({ pollMs: 600_000 })
    const rolledBack = await newOrder(client, { notify_url: fast.notifyUrl, amount: 101 })
    await assert.rejects(() =>
      db.transaction(async (trx) => {
        await trx.from('orders').where('id', rolledBack.id).update({ status: 2 })
        await callbackOutbox.enqueue(trx, rolledBack)
        throw new Error('payment rolled back')
      })
    )
    assert.isNull(await Callback.findBy('order_id', rolledBack.id))

    // A later payment goes out (the loop woke and ran), and only that one.
    const paid = await newOrder(client, { notify_url: fast.notifyUrl, amount: 102 })
    await paymentService.markPaid(paid.id, { reference: `tx-${paid.tradeId}`, source: 'scanner' })
    await until(async () => (await delivered([paid])) === 1, 20_000, 'callback delivered')
    assert.lengthOf(fast.requests, 1)
    assert.equal(JSON.parse(fast.requests[0].body).trade_id, paid.tradeId)
  }).timeout(30_000)

  test('stopping gives back claimed callbacks not yet sent, for another worker', async ({
    client,
    assert,
  }) => {
    await settings.set('callbacks.concurrency', '8')
    await settings.set('callbacks.per_host_concurrency', '1')
    fast.resetCounts([{ status: 200, body: 'ok', delayMs: 300 }])
    const orders = await paidOrders(client, fast.notifyUrl, 6)
    loop = new DeliveryLoop(callbackDeliverer)
    void loop.run()
    await until(() => fast.requests.length >= 1, 10_000, 'first request')
    await loop.stop()
    loop = null
    // One sent and recorded; none of the others is left leased.
    assert.equal(
      Number((await db.from('callbacks').whereNotNull('locked_by').count('* as n'))[0].n),
      0
    )
    const sent = await delivered(orders)
    assert.isAtLeast(sent, 1)
    assert.isBelow(sent, 6)
    const report = await callbackDeliverer.drain()
    assert.equal(report.delivered, 6 - sent)
  }).timeout(30_000)
})

test.group('Merchant callbacks: keep-alive Agent keeps the SSRF checks', (group) => {
  const merchant = new MerchantServer()
  group.setup(async () => {
    await merchant.start()
    return () => merchant.stop()
  })
  group.each.setup(() => merchant.reset())

  const request = (url: string) => ({ method: 'POST' as const, url, headers: {}, body: '{}' })

  test('a name resolving to loopback is refused at connect, without a request', async ({
    assert,
  }) => {
    const url = merchant.notifyUrl.replace('127.0.0.1', 'localhost')
    await assert.rejects(
      () => safeRequest(request(url), { timeoutMs: 5000, allowPrivateTargets: false }),
      /resolves to .*private or loopback/
    )
    const refused = await safeRequest(request(url), {
      timeoutMs: 5000,
      allowPrivateTargets: false,
    }).catch((error) => error)
    assert.instanceOf(refused, ForbiddenTargetError)
    assert.lengthOf(merchant.requests, 0)
  })

  test('a connection opened while private targets were allowed is not reused once they are not', async ({
    assert,
  }) => {
    const url = merchant.notifyUrl.replace('127.0.0.1', 'localhost')
    const allowed = await safeRequest(request(url), { timeoutMs: 5000, allowPrivateTargets: true })
    assert.equal(allowed.status, 200)
    assert.lengthOf(merchant.requests, 1)
    const refused = await safeRequest(request(url), {
      timeoutMs: 5000,
      allowPrivateTargets: false,
    }).catch((error) => error)
    assert.instanceOf(refused, ForbiddenTargetError)
    assert.lengthOf(merchant.requests, 1)
  })

  test('private address literals are refused before any connection', async ({ assert }) => {
    const port = new URL(merchant.url).port
    for (const host of [
      '127.0.0.1',
      '[::1]',
      '[::ffff:127.0.0.1]',
      '10.0.0.1',
      '[64:ff9b::7f00:1]',
    ]) {
      const refused = await safeRequest(request(`http://${host}:${port}/notify`), {
        timeoutMs: 5000,
        allowPrivateTargets: false,
      }).catch((error) => error)
      assert.instanceOf(refused, ForbiddenTargetError, host)
    }
    assert.lengthOf(merchant.requests, 0)
  })

  test('the body is capped and the whole exchange is timed out', async ({ assert }) => {
    merchant.reset([{ status: 200, body: 'x'.repeat(200_000) }])
    const big = await safeRequest(request(merchant.notifyUrl), {
      timeoutMs: 5000,
      allowPrivateTargets: true,
      maxBodyBytes: 1000,
    })
    assert.equal(big.body.length, 1000)
    // The answer is held past the request's end: only the timeout can have ended it.
    merchant.reset([{ status: 200, body: 'ok' }])
    merchant.hold()
    await assert.rejects(
      () => safeRequest(request(merchant.notifyUrl), { timeoutMs: 300, allowPrivateTargets: true }),
      /timed out/
    )
    assert.equal(merchant.heldCount, 1, 'the answer is still held')
    merchant.release()
  })
})
