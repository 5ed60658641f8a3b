import { createServer, type Socket } from 'node:net'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import type Order from '#models/order'
import { NotificationDeliverer, notificationDelivery } from '#notifications/notification_delivery'
import { raiseNotification } from '#notifications/notifier'
import { NOTIFICATION_EVENTS, eventDefinition } from '#notifications/notification_events'
import { closeCallbackAgents } from '#callbacks/safe_http'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { FAKE_BOT_TOKEN, FakeTelegram } from '#tests/helpers/fake_telegram'
import { SmtpTestServer } from '#tests/helpers/smtp_server'
import { Anvil } from '#tests/helpers/evm/anvil'
import {
  configureEthereum,
  createEthOrder,
  deployTokens,
  scanEthereum,
} from '#tests/helpers/evm/evm_setup'

const CHAT = 424242
const WEBHOOK_SECRET = 'end-to-end-webhook-secret'

/** Polls `condition` every 20 ms until it holds; fails after `timeoutMs`. */
async function until(
  condition: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 15_000
) {
  const started = Date.now()
  while (!(await condition())) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

type Channels = { telegram: FakeTelegram; smtp: SmtpTestServer; webhook: MerchantServer }

/** All three channels on, each pointed at its local service, no cap. */
async function channelsOn(channels: Channels, overrides: Record<string, string> = {}) {
  await settings.setMany({
    'notify.telegram.enabled': 'true',
    'notify.telegram.bot_token': FAKE_BOT_TOKEN,
    'notify.telegram.chat_ids': String(CHAT),
    'notify.telegram.api_url': channels.telegram.url,
    'notify.telegram.commands': 'false',
    'notify.telegram.cap_per_hour': '0',
    'notify.email.enabled': 'true',
    'notify.email.host': '127.0.0.1',
    'notify.email.port': String(channels.smtp.port),
    'notify.email.tls': 'starttls',
    'notify.email.tls_reject_unauthorized': 'false',
    'notify.email.user': channels.smtp.user,
    'notify.email.password': channels.smtp.password,
    'notify.email.from': 'Gateway <alerts@gateway.example>',
    'notify.email.recipients': 'ops@shop.example',
    'notify.email.cap_per_hour': '0',
    'notify.webhook.enabled': 'true',
    'notify.webhook.url': `${channels.webhook.url}/hook`,
    'notify.webhook.secret': WEBHOOK_SECRET,
    'notify.webhook.allow_private_targets': 'true',
    'notify.webhook.cap_per_hour': '0',
    ...overrides,
  })
}

test.group('Notifications end to end: the worker’s loop to real protocol fakes', (group) => {
  const channels = {
    telegram: new FakeTelegram(),
    smtp: new SmtpTestServer({ tls: 'starttls' }),
    webhook: new MerchantServer(),
  }
  const anvil = new Anvil()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }

  group.setup(async () => {
    await Promise.all([channels.telegram.start(), channels.smtp.start(), channels.webhook.start()])
    await anvil.start()
    tokens = await deployTokens(anvil)
    return async () => {
      await notificationDelivery.stop()
      await closeCallbackAgents()
      await anvil.stop()
      await Promise.all([channels.telegram.stop(), channels.smtp.stop(), channels.webhook.stop()])
    }
  })

  group.each.setup(async () => {
    await notificationDelivery.stop()
    await resetDatabase()
    channels.telegram.reset()
    channels.telegram.addChat({ id: CHAT, type: 'private' } as any)
    channels.smtp.reset()
    if (!channels.smtp.running) await channels.smtp.up()
    channels.webhook.reset([{ status: 200, body: 'ok' }])
    return () => notificationDelivery.stop()
  })

  test('a payment on anvil, found by the scanner, reaches Telegram, e-mail and the webhook', async ({
    client,
    assert,
  }) => {
    const fixture = await configureEthereum(tokens, [anvil.url], 1)
    await channelsOn(channels)
    notificationDelivery.start({ pollMs: 50 })

    const order = await createEthOrder(client)
    const raisedAt = Date.now()
    await anvil.payToken(fixture.usdt, 6, fixture.wallet, order.actualAmount)
    await anvil.mine(1)
    const report = await scanEthereum()
    await order.refresh()
    assert.equal(order.status, 2, `the scanner paid the order (its scan: ${report.detail})`)

    await until(
      () =>
        channels.telegram.accepted.length === 1 &&
        channels.smtp.messages.length === 1 &&
        channels.webhook.requests.length === 1,
      'one message on each channel'
    )
    const latencyMs = Date.now() - raisedAt
    const telegram = channels.telegram.accepted[0]
    assert.equal(telegram.chatId, CHAT)
    assert.include(telegram.text, `Order paid: ${order.actualAmount} USDT on ethereum`)
    assert.include(telegram.text, order.tradeId)
    const mail = channels.smtp.messages[0]
    assert.include(mail.parsed.subject ?? '', 'Order paid')
    assert.include(mail.parsed.text ?? '', order.tradeId)
    assert.isTrue(mail.secure, 'sent over STARTTLS')
    const hook = JSON.parse(channels.webhook.requests[0].body)
    assert.equal(hook.event, 'order.paid')
    assert.equal(hook.data.trade_id, order.tradeId)
    // Recorded once each service has answered (a moment after it got the message).
    await until(async () => {
      const rows = await db.from('notification_deliveries').where('status', 'delivered')
      return rows.length === 3
    }, 'three deliveries recorded')
    const rows = await db.from('notification_deliveries').select('channel', 'status')
    assert.sameMembers(
      rows.map((row) => `${row.channel}:${row.status}`),
      ['telegram:delivered', 'email:delivered', 'webhook:delivered']
    )
    console.log(`  end to end: payment scanned → three channels in ${latencyMs} ms`)
  }).timeout(60_000)

  test('100 paid orders through a Telegram limited to 1 message a second: each told once, in order', async ({
    client,
    assert,
  }) => {
    await prepareLifecycle()
    await channelsOn(channels, {
      'notify.email.enabled': 'false',
      'notify.webhook.enabled': 'false',
    })
    channels.telegram.perChatPerSecond = 1
    channels.telegram.retryAfterSeconds = 1
    const orders: Order[] = []
    for (let index = 0; index < 100; index++) {
      const order = await newOrder(client, { amount: 100 + index })
      orders.push(order)
    }
    const started = Date.now()
    for (const order of orders)
      await paymentService.markPaid(order.id, {
        reference: `tx-${order.tradeId}`,
        source: 'scanner',
      })
    notificationDelivery.start({ pollMs: 50 })
    await until(() => channels.telegram.accepted.length >= 100, '100 messages', 240_000)
    const seconds = (Date.now() - started) / 1000
    // None twice, none lost, in the order paid.
    const tradeIds = channels.telegram.accepted.map(
      (message) => /Trade ID: (\S+)/.exec(message.text)?.[1]
    )
    assert.deepEqual(
      tradeIds,
      orders.map((order) => order.tradeId)
    )
    const refused = channels.telegram.calls.filter((call) => call.status === 429).length
    await until(async () => {
      const [{ n }] = await db
        .from('notification_deliveries')
        .where('status', 'delivered')
        .count('* as n')
      return Number(n) === 100
    }, '100 deliveries recorded')
    const rows = await db
      .from('notification_deliveries')
      .where('status', 'delivered')
      .count('* as n')
    assert.equal(Number(rows[0].n), 100)
    const [{ spent }] = await db.from('notification_deliveries').max('attempts as spent')
    assert.equal(Number(spent), 1, 'the 429s spent no attempt: none can be given up for them')
    console.log(
      `  100 orders through a 1/s chat: ${seconds.toFixed(1)} s, ${refused} answers 429 (each waited out)`
    )
  }).timeout(300_000)

  test('an SMTP server that is down delays the mail and loses none; the other channels are not held up', async ({
    client,
    assert,
  }) => {
    await prepareLifecycle()
    await channelsOn(channels, { 'notify.telegram.enabled': 'false' })
    await channels.smtp.down()
    notificationDelivery.start({ pollMs: 50 })
    const orders: Order[] = []
    for (let index = 0; index < 5; index++) {
      const order = await newOrder(client, { amount: 200 + index })
      await paymentService.markPaid(order.id, {
        reference: `tx-${order.tradeId}`,
        source: 'scanner',
      })
      orders.push(order)
    }
    // The webhook gets all five while the mail server is down.
    await until(() => channels.webhook.requests.length === 5, 'five webhook calls')
    // The first mail's attempt failed; the ones behind it wait as long, their attempts unspent.
    await until(async () => {
      const rows = await db.from('notification_deliveries').where('channel', 'email')
      return (
        rows.length === 5 &&
        rows.every((row) => row.status === 'pending') &&
        rows.some((row) => Number(row.attempts) > 0)
      )
    }, 'the mails waiting to be retried')
    const [mail] = await db
      .from('notification_deliveries')
      .where('channel', 'email')
      .where('attempts', '>', 0)
      .select('last_error')
    assert.match(mail.last_error, /ECONNREFUSED|connect|closed/i)
    assert.lengthOf(channels.smtp.messages, 0)

    // The server is back; the back-off's wait (10 s, then 20 s …) is moved to now.
    await channels.smtp.up()
    await db
      .from('notification_deliveries')
      .where('channel', 'email')
      .update({ next_attempt_at: Date.now() })
    notificationDelivery.wake()
    await channels.smtp.waitForMessages(5, 15_000)
    // Every delivery recorded as delivered: none is sent again, so a duplicate would be here by now.
    await until(async () => {
      const rows = await db.from('notification_deliveries').where('channel', 'email')
      return rows.length === 5 && rows.every((row) => row.status === 'delivered')
    }, 'the five mails recorded as delivered')
    const subjects = channels.smtp.messages.map((message) => message.parsed.text ?? '')
    for (const order of orders)
      assert.lengthOf(
        subjects.filter((text) => text.includes(order.tradeId)),
        1,
        `one mail for ${order.tradeId}`
      )
    assert.lengthOf(channels.smtp.messages, 5)
  }).timeout(60_000)

  test('a mail server that hangs holds up no other channel', async ({ client, assert }) => {
    await prepareLifecycle()
    // Accepts connections, never answers: each mail attempt waits for its timeout.
    const sockets = new Set<Socket>()
    const silent = createServer((socket) => {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
    })
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve))
    const port = (silent.address() as { port: number }).port
    try {
      await channelsOn(channels, {
        'notify.telegram.enabled': 'false',
        'notify.email.port': String(port),
        'notify.email.tls': 'none',
      })
      notificationDelivery.start({ pollMs: 50 })
      const pay = async (amount: number) => {
        const order = await newOrder(client, { amount })
        await paymentService.markPaid(order.id, {
          reference: `tx-${order.tradeId}`,
          source: 'scanner',
        })
      }
      await pay(300)
      await until(
        () => channels.webhook.requests.length === 1 && sockets.size === 1,
        'the first sends'
      )
      // The mail is stuck on its connection; the webhook keeps up with every new payment.
      const started = Date.now()
      for (let index = 1; index < 5; index++) await pay(300 + index)
      await until(() => channels.webhook.requests.length === 5, 'four more webhook calls', 5000)
      assert.isBelow(Date.now() - started, 5000)
      assert.lengthOf(channels.smtp.messages, 0)
      // Recorded once the receiver has answered (a moment after it saw the request).
      await until(async () => {
        const delivered = await db
          .from('notification_deliveries')
          .where('channel', 'webhook')
          .where('status', 'delivered')
        return delivered.length === 5
      }, 'five webhook deliveries recorded')
    } finally {
      for (const socket of sockets) socket.destroy()
      silent.close()
    }
  }).timeout(60_000)

  test('an e-mail digest: the events of a window wait for its end, then go as one message', async ({
    assert,
  }) => {
    await channelsOn(channels, {
      'notify.telegram.enabled': 'false',
      'notify.webhook.enabled': 'false',
      'notify.email.digest_minutes': '10',
    })
    const raisedAt = Date.now()
    await raiseNotification('order.paid', {
      trade_id: 'T-D1',
      order_id: 'o1',
      amount: '1',
      token: 'USDT',
      network: 'tron',
    })
    await raiseNotification('callback.gave_up', {
      trade_id: 'T-D2',
      order_id: 'o2',
      callback_id: 7,
      attempts: 10,
      error: 'HTTP 500',
    })
    await raiseNotification('order.paid', {
      trade_id: 'T-D3',
      order_id: 'o3',
      amount: '2',
      token: 'USDT',
      network: 'tron',
    })
    const deliverer = new NotificationDeliverer()
    while ((await deliverer.runOnce()) > 0) {}
    const rows = await db.from('notification_deliveries').where('channel', 'email').orderBy('id')
    assert.lengthOf(rows, 3)
    const windowEnd = Math.ceil((raisedAt + 1) / 600_000) * 600_000
    for (const row of rows) {
      assert.equal(row.status, 'pending')
      assert.equal(Number(row.attempts), 0)
      assert.approximately(Number(row.next_attempt_at), windowEnd, 600_000)
      assert.isAbove(Number(row.next_attempt_at), Date.now())
    }
    assert.lengthOf(channels.smtp.messages, 0, 'nothing before the window ends')

    // The window ends.
    await db.from('notification_deliveries').update({ next_attempt_at: Date.now() })
    while ((await deliverer.runOnce()) > 0) {}
    await channels.smtp.waitForMessages(1)
    assert.lengthOf(channels.smtp.messages, 1)
    const text = channels.smtp.messages[0].parsed.text ?? ''
    for (const tradeId of ['T-D1', 'T-D2', 'T-D3']) assert.include(text, tradeId)
    assert.isBelow(text.indexOf('T-D2'), text.indexOf('T-D1'), 'the critical event first')
    const after = await db.from('notification_deliveries').where('status', 'delivered')
    assert.lengthOf(after, 3)
  }).timeout(30_000)

  test('every event reaches every channel, with its title', async ({ assert }) => {
    await channelsOn(channels)
    const order = {
      trade_id: 'T2026112700001',
      order_id: 'shop-1042',
      amount: '13.79',
      token: 'USDT',
      network: 'tron',
      fiat_amount: '100',
      currency: 'cny',
      reference: '9f2c0a',
    }
    const samples: Record<string, Record<string, unknown>> = {
      'order.paid': order,
      'order.paid_late': { ...order, previous_status: 'expired' },
      'payment.unmatched': {
        network: 'tron',
        kind: 'unexplained',
        reference: '',
        to: 'TWallet',
        token: 'USDT',
        amount: '5',
        reason: 'the balance rose by more than the transfers seen',
      },
      'callback.failing': {
        callback_id: 3,
        trade_id: order.trade_id,
        order_id: 'shop-1042',
        attempts: 5,
        error: 'HTTP 502',
      },
      'callback.gave_up': {
        callback_id: 3,
        trade_id: order.trade_id,
        order_id: 'shop-1042',
        attempts: 10,
        error: 'HTTP 502',
      },
      'reorg.credited_order': {
        network: 'ethereum',
        trade_id: order.trade_id,
        reference: '0xabc',
        block: 'block 12 (0x12…)',
        amount: '13.79',
        token: 'USDT',
      },
      'scanner.stalled': {
        network: 'tron',
        last_scan_at: '2026-11-27T06:00:00.000Z',
        minutes: 14,
        last_error: 'HTTP 429',
        interrupted: false,
        interrupted_minutes: null,
      },
      'scanner.recovered': { network: 'tron', last_scan_at: '2026-11-27T06:20:00.000Z' },
      'rpc.budget_low': {
        network: 'tron',
        endpoint: 'api.trongrid.io',
        used: 80_000,
        per_day: 100_000,
        detail: '',
      },
      'rpc.exhausted': {
        network: 'ethereum',
        endpoint: 'mainnet.infura.io',
        used: null,
        per_day: null,
        detail: 'its daily credits are spent (HTTP 402)',
      },
      'rate.stale': {
        currency: 'CNY',
        finding: 'CNY: no fresh rate for USDT: timed out',
        fix: 'node ace rate:set USDT CNY <rate>',
      },
      'admin.sign_in': {
        email: 'ops@example.com',
        ip: '203.0.113.9',
        role: 'admin',
        method: 'password',
      },
      'daily.report': {
        day: '2026-11-26',
        orders_created: 52,
        orders_paid: 41,
        conversion_percent: 78.8,
        paid_volume: { 'USDT on tron': '1520.5' },
        callbacks: { delivered: 41 },
        unmatched_payments: 0,
      },
      'notifications.folded': {
        event: 'order.paid',
        count: 37,
        first_at: 0,
        last_at: 0,
        titles: ['Order paid: 1 USDT on tron'],
      },
      'notifications.test': { by: 'ops@example.com' },
    }
    assert.sameMembers(
      Object.keys(samples),
      Object.keys(NOTIFICATION_EVENTS),
      'a sample for every event'
    )
    for (const [name, data] of Object.entries(samples)) await raiseNotification(name, data)
    const deliverer = new NotificationDeliverer()
    while ((await deliverer.runOnce()) > 0) {}
    const count = Object.keys(samples).length
    await channels.smtp.waitForMessages(count)
    assert.lengthOf(channels.telegram.accepted, count)
    assert.lengthOf(channels.webhook.requests, count)
    for (const [name, data] of Object.entries(samples)) {
      const title = eventDefinition(name).render(data).title
      assert.isTrue(
        channels.telegram.accepted.some((message) => message.text.includes(title)),
        `${name} on Telegram`
      )
      assert.isTrue(
        channels.smtp.messages.some((mail) => (mail.parsed.subject ?? '').includes(title)),
        `${name} by e-mail`
      )
      assert.isTrue(
        channels.webhook.requests.some((request) => JSON.parse(request.body).title === title),
        `${name} on the webhook`
      )
    }
  }).timeout(60_000)
})
