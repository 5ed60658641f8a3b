import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import settings from '#settings/settings_service'
import { RpcPool } from '#chains/rpc_pool'
import { NotificationWatch, zonedMidnight, zonedParts } from '#notifications/notification_watch'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_NETWORK, installFakeChain } from '#tests/helpers/fake_chain'
import { insertOrders } from '#tests/helpers/order_rows'
import { AdminAgent, createAdminUser } from '#tests/helpers/admin'

async function events(name?: string) {
  const query = db.from('notification_events').orderBy('id')
  if (name) query.where('name', name)
  return (await query).map((row) => ({ ...row, data: JSON.parse(row.data) }))
}

/** Polls until `condition` holds (at most 5 s). */
async function until(condition: () => Promise<boolean>, what: string) {
  const started = Date.now()
  while (!(await condition())) {
    if (Date.now() - started > 5000) throw new Error(`${what}: not within 5 s`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

test.group('Notifications: what the workers watch for', (group) => {
  group.each.setup(() => resetDatabase())

  test('time zones: midnight and parts of a day, across a DST change', ({ assert }) => {
    assert.equal(zonedMidnight(2026, 1, 10, 'UTC'), Date.UTC(2026, 0, 10))
    assert.equal(zonedMidnight(2026, 1, 10, 'Europe/Berlin'), Date.UTC(2026, 0, 9, 23))
    assert.equal(zonedMidnight(2026, 7, 10, 'Europe/Berlin'), Date.UTC(2026, 6, 9, 22))
    assert.equal(zonedMidnight(2026, 3, 29, 'Europe/Berlin'), Date.UTC(2026, 2, 28, 23))
    assert.deepEqual(zonedParts(Date.UTC(2026, 0, 9, 23, 30), 'Asia/Shanghai'), {
      year: 2026,
      month: 1,
      day: 10,
      hour: 7,
    })
  })

  test('daily.report tells the day before once, from its hour in the time zone', async ({
    assert,
  }) => {
    await settings.setMany({ 'notify.time_zone': 'Asia/Shanghai', 'notify.daily_report_hour': '9' })
    // 2026-03-10 in Shanghai is [03-09 16:00 UTC, 03-10 16:00 UTC).
    const dayStart = Date.UTC(2026, 2, 9, 16)
    await insertOrders(4, (index) => ({
      created_at: dayStart + index * 3_600_000,
      status: index < 3 ? 2 : 1,
      network: 'tron',
      token: 'USDT',
    }))
    await db
      .from('orders')
      .where('status', 2)
      .update({ paid_at: dayStart + 5 * 3_600_000, actual_amount: '1.5' })
    // One created the day before and paid that day: not counted as the day's creation.
    await insertOrders(1, () => ({
      trade_id: 'TEARLIER',
      order_id: 'early',
      created_at: dayStart - 3_600_000,
      status: 2,
    }))
    await db
      .from('orders')
      .where('trade_id', 'TEARLIER')
      .update({ paid_at: dayStart - 60_000 })

    const watch = new NotificationWatch()
    // 03-11 08:30 in Shanghai: before the report's hour.
    await watch.runOnce(Date.UTC(2026, 2, 11, 0, 30))
    assert.lengthOf(await events('daily.report'), 0)
    // 03-11 09:05 in Shanghai: the report of 03-10.
    await watch.runOnce(Date.UTC(2026, 2, 11, 1, 5))
    await watch.runOnce(Date.UTC(2026, 2, 11, 1, 6))
    const reports = await events('daily.report')
    assert.lengthOf(reports, 1)
    assert.equal(reports[0].data.day, '2026-03-10')
    assert.equal(reports[0].data.orders_created, 4)
    assert.equal(reports[0].data.orders_paid, 3)
    assert.equal(reports[0].data.conversion_percent, 75)
    assert.deepEqual(reports[0].data.paid_volume, { 'USDT on tron': '4.5' })
  })

  test('scanner.stalled once per stall, scanner.recovered once when it scans again', async ({
    assert,
  }) => {
    await settings.set('notify.scanner_stalled_minutes', '10')
    await installFakeChain()
    await db
      .from('chains')
      .where('network', FAKE_NETWORK)
      .update({ rpc_urls: '["http://127.0.0.1:9"]' })
    const now = Date.now()
    await db.table('chain_cursors').insert({
      network: FAKE_NETWORK,
      cursor: '',
      caught_up: true,
      last_scan_at: now - 60_000,
      last_error: '',
      updated_at: now,
    })
    const watch = new NotificationWatch()
    await watch.runOnce(now)
    assert.lengthOf(await events('scanner.stalled'), 0, 'a minute is no stall')

    await db
      .from('chain_cursors')
      .update({ last_scan_at: now - 30 * 60_000, last_error: 'HTTP 429 from the endpoint' })
    await watch.runOnce(now)
    await watch.runOnce(now + 60_000)
    const stalled = await events('scanner.stalled')
    assert.lengthOf(stalled, 1)
    assert.equal(stalled[0].data.network, FAKE_NETWORK)
    assert.equal(stalled[0].data.minutes, 30)
    assert.equal(stalled[0].data.last_error, 'HTTP 429 from the endpoint')
    assert.equal(stalled[0].severity, 'critical')

    await db.from('chain_cursors').update({ last_scan_at: now, last_error: '' })
    await watch.runOnce(now)
    await watch.runOnce(now + 1000)
    assert.lengthOf(await events('scanner.recovered'), 1)

    // Runs that all end interrupted (progress kept, time moving) for as long are a stall too.
    await db
      .from('chain_cursors')
      .update({ last_scan_at: now, last_error: 'interrupted: HTTP 429, retry after 60 s' })
    await watch.runOnce(now)
    await watch.runOnce(now + 5 * 60_000)
    assert.lengthOf(
      await events('scanner.stalled'),
      1,
      'five minutes of interruptions are no stall'
    )
    await db.from('chain_cursors').update({ last_scan_at: now + 11 * 60_000 })
    await watch.runOnce(now + 11 * 60_000)
    const interrupted = await events('scanner.stalled')
    assert.lengthOf(interrupted, 2)
    assert.equal(interrupted[1].data.interrupted_minutes, 11)
    await db.from('chain_cursors').update({ last_error: '' })
    await watch.runOnce(now + 12 * 60_000)
    assert.lengthOf(await events('scanner.recovered'), 2)

    // A second stall is a second event.
    await db.from('chain_cursors').update({ last_scan_at: now - 20 * 60_000 })
    await watch.runOnce(now + 13 * 60_000)
    assert.lengthOf(await events('scanner.stalled'), 3)
  })

  test('an RPC endpoint past 80 % of its daily budget, then spent: one event each', async ({
    assert,
  }) => {
    const url = `http://budget-${Date.now()}.example:8545/v3/secret-key-123`
    const pool = new RpcPool([url], {
      network: 'ethereum',
      budgetFor: () => ({ perSecond: 1_000_000, perDay: 10 }),
    } as any)
    for (let index = 0; index < 7; index++) await pool.permit(url)
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.lengthOf(await events('rpc.budget_low'), 0, '70 % is not low')
    await pool.permit(url)
    await pool.permit(url)
    await until(async () => (await events('rpc.budget_low')).length === 1, 'rpc.budget_low')
    await pool.permit(url)
    await assert.rejects(() => pool.permit(url))
    await assert.rejects(() => pool.permit(url))
    await until(async () => (await events('rpc.exhausted')).length === 1, 'rpc.exhausted')
    const [low] = await events('rpc.budget_low')
    assert.equal(low.data.used, 8)
    assert.equal(low.data.per_day, 10)
    assert.notInclude(JSON.stringify(await events()), 'secret-key-123', 'no key in an event')
    assert.lengthOf(await events('rpc.budget_low'), 1)
    assert.lengthOf(await events('rpc.exhausted'), 1)
  })

  test('admin.sign_in when an account signs in from an address it never used', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    await AdminAgent.signIn(admin)
    const first = await events('admin.sign_in')
    assert.lengthOf(first, 1)
    assert.equal(first[0].data.email, admin.email)
    assert.equal(first[0].data.ip, '127.0.0.1')

    await AdminAgent.signIn(admin)
    assert.lengthOf(await events('admin.sign_in'), 1, 'a known address is not told')

    // Another account, known only from another address (the log is append-only: a row is added).
    const other = await createAdminUser()
    await db.table('audit_log').insert({
      created_at: Date.now() - 86_400_000,
      actor_kind: 'user',
      actor_user_id: other.user.id,
      actor: other.email,
      action: 'auth.login',
      subject_type: 'user',
      subject_id: String(other.user.id),
      ip: '203.0.113.9',
    })
    await AdminAgent.signIn(other)
    const all = await events('admin.sign_in')
    assert.lengthOf(all, 2)
    assert.equal(all[1].data.email, other.email)
  })

  test('events older than 30 days are forgotten once every delivery is over', async ({
    assert,
  }) => {
    const old = Date.now() - 31 * 86_400_000
    const insertEvent = async (name: string, status: string | null, createdAt = old) => {
      const [row] = await db
        .table('notification_events')
        .insert({
          name,
          severity: 'info',
          data: '{}',
          forced: false,
          fanned_out: true,
          created_at: createdAt,
        })
        .returning('id')
      const id = Number(typeof row === 'object' ? row.id : row)
      if (status)
        await db.table('notification_deliveries').insert({
          event_id: id,
          channel: 'webhook',
          target: 'https://ops.example/hook',
          status,
          attempts: 1,
          next_attempt_at: createdAt,
          last_error: '',
          summarized: false,
          created_at: createdAt,
          updated_at: createdAt,
        })
      return id
    }
    const delivered = await insertEvent('order.paid', 'delivered')
    const failed = await insertEvent('order.paid', 'failed')
    const nobody = await insertEvent('order.paid', null)
    const pending = await insertEvent('order.paid', 'pending')
    const foldedUntold = await insertEvent('order.paid', 'folded')
    const recent = await insertEvent('order.paid', 'delivered', Date.now() - 86_400_000)

    assert.equal(await new NotificationWatch().prune(), 3)
    const left = (await db.from('notification_events').orderBy('id')).map((row) => Number(row.id))
    assert.deepEqual(left, [pending, foldedUntold, recent])
    assert.notIncludeMembers(left, [delivered, failed, nobody])
    assert.lengthOf(await db.from('notification_deliveries'), 3)
  })
})
