import { createHmac } from 'node:crypto'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import Order, { OrderStatus } from '#models/order'
import { recordUnmatched } from '#services/unmatched_inbox'
import { raiseNotification } from '#notifications/notifier'
import {
  NotificationDeliverer,
  quietHoursEnd,
  type NotificationReport,
} from '#notifications/notification_delivery'
import { closeCallbackAgents } from '#callbacks/safe_http'
import { resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { MerchantServer } from '#tests/helpers/merchant_server'
import { runCommand } from '#tests/helpers/ace_command'
import NotificationsTest from '#commands/notifications_test'
import NotificationsList from '#commands/notifications_list'

const SECRET = 'operator-webhook-secret'

/** The webhook channel on, to `receiver`, every event, no cap. */
async function webhookTo(receiver: MerchantServer, extra: Record<string, string> = {}) {
  await settings.setMany({
    'notify.webhook.enabled': 'true',
    'notify.webhook.url': `${receiver.url}/hook`,
    'notify.webhook.secret': SECRET,
    'notify.webhook.allow_private_targets': 'true',
    'notify.webhook.cap_per_hour': '0',
    ...extra,
  })
}

const emptyReport = (): NotificationReport => ({
  delivered: 0,
  retrying: 0,
  failed: 0,
  folded: 0,
  postponed: 0,
})

/** Runs rounds until nothing more is due now. */
async function deliverAll(deliverer = new NotificationDeliverer()) {
  const report = emptyReport()
  while ((await deliverer.runOnce(report)) > 0) {}
  return report
}

async function deliveries() {
  return db
    .from('notification_deliveries as d')
    .join('notification_events as e', 'e.id', 'd.event_id')
    .orderBy('d.id')
    .select('d.*', 'e.name', 'e.severity', 'e.data')
}

/** Checks a request's signature as a receiver would (docs/notifications.md). */
function verified(request: MerchantServer['requests'][number], now = Date.now()) {
  const timestamp = Number(request.headers['x-gateway-timestamp'])
  if (Math.abs(now / 1000 - timestamp) > 300) return false
  const expected = `sha256=${createHmac('sha256', SECRET).update(`${timestamp}.${request.body}`).digest('hex')}`
  return request.headers['x-gateway-signature'] === expected
}

test.group('Notifications: events, the outbox and the webhook channel', (group) => {
  let receiver: MerchantServer

  group.setup(async () => {
    receiver = new MerchantServer()
    await receiver.start()
    return async () => {
      await closeCallbackAgents()
      await receiver.stop()
    }
  })

  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    receiver.reset([{ status: 200, body: 'ok' }])
  })

  test('a paid order raises order.paid in its transaction; the webhook gets it signed, once', async ({
    client,
    assert,
  }) => {
    await webhookTo(receiver)
    const order = await newOrder(client)
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })
    const [event] = await db.from('notification_events')
    assert.equal(event.name, 'order.paid')
    assert.isFalse(Boolean(event.fanned_out))
    assert.lengthOf(await deliveries(), 0, 'the deliveries are the workers’ to write')

    await new NotificationDeliverer().fanOut()
    const [row] = await deliveries()
    assert.equal(row.name, 'order.paid')
    assert.equal(row.channel, 'webhook')
    assert.equal(row.status, 'pending')

    const report = await deliverAll()
    assert.equal(report.delivered, 1)
    assert.lengthOf(receiver.requests, 1)
    const request = receiver.requests[0]
    assert.isTrue(verified(request), 'the signature checks out')
    assert.equal(request.headers['idempotency-key'], `${row.event_id}:webhook:${receiver.url}/hook`)
    assert.equal(request.headers['x-gateway-event'], 'order.paid')
    const body = JSON.parse(request.body)
    assert.equal(body.event, 'order.paid')
    assert.equal(body.data.trade_id, order.tradeId)
    assert.include(body.title, 'Order paid')
    assert.include(body.links[0].url, `/admin/orders/${order.tradeId}`)

    // A tampered body no longer verifies.
    assert.isFalse(verified({ ...request, body: request.body.replace('order.paid', 'order.xxxx') }))
    const [after] = await deliveries()
    assert.equal(after.status, 'delivered')
    assert.isNull(after.locked_by)
    // Nothing is due any more: no second send.
    await deliverAll()
    assert.lengthOf(receiver.requests, 1)
  })

  test('an event raised in a transaction that rolls back is not sent, nor recorded', async ({
    assert,
  }) => {
    await webhookTo(receiver)
    await db
      .transaction(async (trx) => {
        await raiseNotification('notifications.test', { by: 'test' }, {}, trx)
        throw new Error('rolled back')
      })
      .catch(() => {})
    assert.lengthOf(await db.from('notification_events'), 0)
    assert.lengthOf(await deliveries(), 0)
    await deliverAll()
    assert.lengthOf(receiver.requests, 0)
  })

  test('rules: off, events not chosen, below the least severity: recorded, not sent', async ({
    assert,
  }) => {
    await webhookTo(receiver, { 'notify.webhook.enabled': 'false' })
    await raiseNotification('order.paid', { trade_id: 'T1', order_id: 'o1' })
    await settings.setMany({
      'notify.webhook.enabled': 'true',
      'notify.webhook.events': 'callback.*',
    })
    await raiseNotification('order.paid', { trade_id: 'T2', order_id: 'o2' })
    const gaveUp = await raiseNotification('callback.gave_up', { trade_id: 'T3', callback_id: 1 })
    await settings.setMany({
      'notify.webhook.events': '*',
      'notify.webhook.min_severity': 'warning',
    })
    await raiseNotification('order.paid', { trade_id: 'T4', order_id: 'o4' })
    const late = await raiseNotification('order.paid_late', { trade_id: 'T5', order_id: 'o5' })

    assert.lengthOf(await db.from('notification_events'), 5)
    await new NotificationDeliverer().fanOut()
    const rows = await deliveries()
    assert.deepEqual(
      rows.map((row) => Number(row.event_id)),
      [gaveUp, late]
    )
    await deliverAll()
    assert.deepEqual(
      receiver.requests.map((request) => JSON.parse(request.body).event),
      ['callback.gave_up', 'order.paid_late']
    )
  })

  test('a receiver that fails is retried (its Retry-After honoured), then delivered; a 4xx fails at once', async ({
    assert,
  }) => {
    await webhookTo(receiver)
    receiver.reset([
      { status: 503, body: 'busy', headers: { 'retry-after': '7' } },
      { status: 200, body: 'ok' },
    ])
    await raiseNotification('notifications.test', { by: 'test' })
    const started = Date.now()
    const first = await deliverAll()
    assert.equal(first.retrying, 1)
    let [row] = await deliveries()
    assert.equal(row.status, 'pending')
    assert.equal(row.attempts, 1)
    assert.include(row.last_error, 'HTTP 503')
    assert.approximately(Number(row.next_attempt_at) - started, 7000, 1500)

    // Not due yet: nothing is sent.
    await deliverAll()
    assert.lengthOf(receiver.requests, 1)

    await db.from('notification_deliveries').update({ next_attempt_at: Date.now() })
    const second = await deliverAll()
    assert.equal(second.delivered, 1)
    ;[row] = await deliveries()
    assert.equal(row.status, 'delivered')
    assert.equal(row.attempts, 2)
    // The same idempotency key on both attempts.
    assert.equal(
      receiver.requests[0].headers['idempotency-key'],
      receiver.requests[1].headers['idempotency-key']
    )

    receiver.reset([{ status: 410, body: 'gone' }])
    await raiseNotification('notifications.test', { by: 'test' })
    const third = await deliverAll()
    assert.equal(third.failed, 1)
    const rows = await deliveries()
    assert.equal(rows[1].status, 'failed')
    assert.include(rows[1].last_error, 'HTTP 410: gone')
  })

  test('a receiver’s rate limit (429) is waited out without spending attempts', async ({
    assert,
  }) => {
    await webhookTo(receiver, { 'notify.max_attempts': '2' })
    receiver.reset([
      { status: 429, body: 'slow down', headers: { 'retry-after': '1' } },
      { status: 429, body: 'slow down', headers: { 'retry-after': '1' } },
      { status: 429, body: 'slow down', headers: { 'retry-after': '1' } },
      { status: 200, body: 'ok' },
    ])
    await raiseNotification('notifications.test', { by: 'test' })
    for (let round = 0; round < 3; round++) {
      await deliverAll()
      const [row] = await deliveries()
      assert.equal(row.status, 'pending', 'still waiting, not given up')
      assert.equal(row.attempts, 0)
      await db.from('notification_deliveries').update({ next_attempt_at: Date.now() })
    }
    await deliverAll()
    const [row] = await deliveries()
    assert.equal(row.status, 'delivered')
    assert.lengthOf(receiver.requests, 4)
  })

  test('a receiver down for good is given up after notify.max_attempts', async ({ assert }) => {
    await webhookTo(receiver, { 'notify.max_attempts': '2' })
    receiver.reset([{ status: 500, body: 'down' }])
    await raiseNotification('notifications.test', { by: 'test' })
    await deliverAll()
    await db.from('notification_deliveries').update({ next_attempt_at: Date.now() })
    const report = await deliverAll()
    assert.equal(report.failed, 1)
    const [row] = await deliveries()
    assert.equal(row.status, 'failed')
    assert.equal(row.attempts, 2)
    assert.include(row.last_error, 'gave up after 2 attempts')
  })

  test('quiet hours and mute hold all but critical events until they end', async ({ assert }) => {
    const now = Date.now()
    const utc = new Date(now)
    const hhmm = (date: Date) =>
      `${String(date.getUTCHours()).padStart(2, '0')}:${String(date.getUTCMinutes()).padStart(2, '0')}`
    const quiet = `${hhmm(new Date(now - 60 * 60_000))}-${hhmm(new Date(now + 60 * 60_000))}`
    await webhookTo(receiver, { 'notify.webhook.quiet_hours': quiet, 'notify.time_zone': 'UTC' })
    await raiseNotification('order.paid', { trade_id: 'T1', order_id: 'o1' })
    await raiseNotification('callback.gave_up', { trade_id: 'T2', callback_id: 9 })
    const report = await deliverAll()
    assert.equal(report.delivered, 1)
    assert.equal(report.postponed, 1)
    assert.deepEqual(
      receiver.requests.map((request) => JSON.parse(request.body).event),
      ['callback.gave_up']
    )
    const [held] = await deliveries()
    assert.equal(held.status, 'pending')
    assert.equal(held.attempts, 0, 'waiting spends no attempt')
    const end = quietHoursEnd(quiet, now, 'UTC')!
    assert.equal(Number(held.next_attempt_at), end)
    assert.approximately(end - utc.getTime(), 60 * 60_000, 61_000)

    // Muted: the same, until muted_until.
    await settings.setMany({
      'notify.webhook.quiet_hours': '',
      'notify.webhook.muted_until': String(Date.now() + 30 * 60_000),
    })
    await db.from('notification_deliveries').update({ next_attempt_at: Date.now() })
    assert.equal((await deliverAll()).postponed, 1)
    await settings.set('notify.webhook.muted_until', '0')
    await db.from('notification_deliveries').update({ next_attempt_at: Date.now() })
    assert.equal((await deliverAll()).delivered, 1)
  })

  test('quiet hours: HH:MM-HH:MM in the time zone, across midnight', ({ assert }) => {
    // 23:30 UTC is 00:30 in Europe/Berlin (winter): inside 22:00-07:00 there, ending at 06:00 UTC.
    const at = Date.UTC(2026, 0, 10, 23, 30)
    assert.equal(quietHoursEnd('22:00-07:00', at, 'Europe/Berlin'), Date.UTC(2026, 0, 11, 6, 0))
    assert.isNull(quietHoursEnd('22:00-07:00', Date.UTC(2026, 0, 10, 12, 0), 'Europe/Berlin'))
    assert.isNull(quietHoursEnd('', at, 'UTC'))
    assert.equal(
      quietHoursEnd('09:00-17:00', Date.UTC(2026, 0, 10, 9, 0), 'UTC'),
      Date.UTC(2026, 0, 10, 17, 0)
    )
  })

  test('the hourly cap folds the rest into one "… and N more" once there is room', async ({
    assert,
  }) => {
    await webhookTo(receiver, { 'notify.webhook.cap_per_hour': '2' })
    for (let index = 0; index < 5; index++)
      await raiseNotification('order.paid', {
        trade_id: `T${index}`,
        order_id: `o${index}`,
        amount: '1',
      })
    const report = await deliverAll()
    assert.equal(report.delivered, 2)
    assert.equal(report.folded, 3)
    assert.lengthOf(receiver.requests, 2)
    // Still no room within the hour: no summary yet.
    await deliverAll()
    assert.lengthOf(receiver.requests, 2)

    // An hour later (the two sent are older than an hour): the summary goes out, once.
    await db
      .from('notification_deliveries')
      .where('status', 'delivered')
      .update({
        delivered_at: Date.now() - 3_700_000,
      })
    await deliverAll()
    await deliverAll()
    assert.lengthOf(receiver.requests, 3)
    const summary = JSON.parse(receiver.requests[2].body)
    assert.equal(summary.event, 'notifications.folded')
    assert.equal(summary.data.count, 3)
    assert.equal(summary.title, '… and 3 more order.paid in the last hour')
    assert.lengthOf(summary.lines, 3)
  })

  test('a late payment raises order.paid_late; an unmatched payment payment.unmatched', async ({
    client,
    assert,
  }) => {
    await webhookTo(receiver)
    const order = await newOrder(client)
    await Order.query().where('id', order.id).update({ status: OrderStatus.EXPIRED })
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'admin' })
    await recordUnmatched('tron', {
      reference: 'tx-unknown',
      position: '0',
      kind: 'transfer',
      to: 'TAddr',
      token: 'USDT',
      amount: '5',
      timestamp: Date.now(),
      reason: 'no waiting order for this amount',
    })
    // Seen again: recorded once, told once.
    await recordUnmatched('tron', {
      reference: 'tx-unknown',
      position: '0',
      kind: 'transfer',
      to: 'TAddr',
      token: 'USDT',
      amount: '5',
      timestamp: Date.now(),
      reason: 'no waiting order for this amount',
    })
    await deliverAll()
    const bodies = receiver.requests.map((request) => JSON.parse(request.body))
    assert.deepEqual(
      bodies.map((body) => body.event),
      ['order.paid_late', 'payment.unmatched']
    )
    assert.equal(bodies[0].severity, 'warning')
    assert.equal(bodies[0].data.previous_status, 'expired')
    assert.equal(bodies[1].data.reference, 'tx-unknown')
  })

  test('a dedupe key raises an event once', async ({ assert }) => {
    assert.isNotNull(
      await raiseNotification('notifications.test', { by: 'a' }, { dedupeKey: 'k1' })
    )
    assert.isNull(await raiseNotification('notifications.test', { by: 'b' }, { dedupeKey: 'k1' }))
    assert.lengthOf(await db.from('notification_events'), 1)
  })

  test('a target the channel stopped gets nothing more; others are unaffected', async ({
    assert,
  }) => {
    await webhookTo(receiver)
    await db.table('notification_targets').insert({
      channel: 'webhook',
      target: `${receiver.url}/hook`,
      reason: 'stopped by a test',
      stopped_at: Date.now(),
    })
    await raiseNotification('notifications.test', { by: 'test' })
    await deliverAll()
    assert.lengthOf(await deliveries(), 0, 'no delivery for a stopped target')
    assert.lengthOf(receiver.requests, 0)
  })

  test('notifications:test sends through one channel and prints its answer; refusals exit 1', async ({
    assert,
  }) => {
    await webhookTo(receiver, {
      'notify.webhook.enabled': 'false',
      'notify.webhook.events': 'order.*',
    })
    const sent = await runCommand(NotificationsTest, ['webhook'])
    assert.equal(sent.exitCode, 0, sent.output)
    assert.include(sent.output, `webhook → ${receiver.url}/hook: delivered`)
    assert.lengthOf(receiver.requests, 1, 'sent whatever the rules say (off, events order.*)')
    assert.equal(JSON.parse(receiver.requests[0].body).event, 'notifications.test')
    assert.match(JSON.parse(receiver.requests[0].body).data.by, /^ace:/)

    receiver.reset([{ status: 410, body: 'gone' }])
    const refused = await runCommand(NotificationsTest, ['webhook'])
    assert.equal(refused.exitCode, 1)
    assert.include(refused.output, 'failed: HTTP 410: gone')

    const unknown = await runCommand(NotificationsTest, ['pager'])
    assert.equal(unknown.exitCode, 1)
    assert.include(unknown.output, 'Unknown notification channel "pager"')

    const unconfigured = await runCommand(NotificationsTest, ['email'])
    assert.equal(unconfigured.exitCode, 1)
    assert.include(unconfigured.output, 'The channel "email" cannot send')
    // Only the two webhook tests were raised.
    assert.lengthOf(await db.from('notification_events'), 2)
  })

  test('notifications:list shows each channel, its state and rules, and the last deliveries', async ({
    assert,
  }) => {
    await webhookTo(receiver, { 'notify.webhook.events': 'order.*,callback.gave_up' })
    await raiseNotification('order.paid', { trade_id: 'T-LIST', order_id: 'o1', amount: '1' })
    await deliverAll()
    const { exitCode, output } = await runCommand(NotificationsList, [])
    assert.equal(exitCode, 0)
    for (const text of [
      'telegram',
      'email',
      'webhook',
      'ready',
      'order.*,callback.gave_up',
      'order.paid',
      '1 delivered',
    ])
      assert.include(output, text)
    assert.include(output, 'notify.email.host', 'an unconfigured channel says what is missing')
  })
})
