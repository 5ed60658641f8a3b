import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { latePayment } from '#tests/helpers/unmatched_payments'

let references = 0

/** Audit rows of the actions here (sign-ins and the users' creation left out). */
async function changes() {
  const [row] = await db
    .from('audit_log')
    .whereIn('action', ['order.mark_paid', 'unmatched.assign', 'unmatched.dismiss'])
    .count('* as total')
  return Number(row.total)
}

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  const user = await createAdminUser({ role })
  return { user, agent: await AdminAgent.signIn(user) }
}

/** An order whose life ended, then a transfer of its amount: kept as unmatched by the scanner. */
function lateTransfer(client: any) {
  return latePayment(client, `0xconsole${String(++references).padStart(6, '0')}`)
}

test.group('Console unmatched payments pages', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('the list: waiting ones by default with the reason; filters; the empty state', async ({
    client,
    assert,
  }) => {
    const { agent } = await signedIn()
    const empty = await agent.get('/unmatched')
    assert.equal(empty.status, 200)
    assert.include(pageText(empty.text), 'Nothing waits for you')

    const { order, payment } = await lateTransfer(client)
    const { payment: other } = await lateTransfer(client)
    await db
      .from('unmatched_payments')
      .where('id', other.id)
      .update({ dismissed_at: Date.now(), dismiss_note: 'test' })

    const page = await agent.get('/unmatched')
    const text = pageText(page.text)
    assert.include(text, '1 waits for you')
    assert.include(page.text, `href="/admin/unmatched/${payment.id}"`)
    assert.notInclude(page.text, `href="/admin/unmatched/${other.id}"`)
    assert.include(text, `made after the life of order ${order.tradeId} ended`)
    assert.include(text, `${payment.amount} USDT`)

    const dismissed = await agent.get('/unmatched?state=dismissed')
    assert.include(dismissed.text, `href="/admin/unmatched/${other.id}"`)
    assert.notInclude(dismissed.text, `href="/admin/unmatched/${payment.id}"`)
    const all = await agent.get('/unmatched?state=all&token=usdt&network=FakeNet')
    assert.include(all.text, `href="/admin/unmatched/${other.id}"`)
    assert.include(all.text, `href="/admin/unmatched/${payment.id}"`)
    const none = await agent.get('/unmatched?token=BTC')
    assert.include(pageText(none.text), 'No unmatched payment matches these filters')
    assert.equal((await agent.get('/unmatched?state=lost')).status, 400)
  })

  test('the detail suggests the order its reason names; assigning pays it, audited, said', async ({
    client,
    assert,
  }) => {
    const { order, payment } = await lateTransfer(client)
    const { agent, user } = await signedIn()
    const page = await agent.get(`/unmatched/${payment.id}`)
    assert.equal(page.status, 200)
    assert.include(pageText(page.text), payment.reference)
    assert.match(page.text, new RegExp(`name="trade_id"[^>]*value="${order.tradeId}"`))

    const assigned = await agent.post(`/unmatched/${payment.id}/assign`, {
      trade_id: order.tradeId,
    })
    assert.equal(assigned.location, `/admin/unmatched/${payment.id}`)
    const after = await agent.get(`/unmatched/${payment.id}`)
    const text = pageText(after.text)
    assert.include(text, `Order ${order.tradeId} is paid by ${payment.reference}.`)
    assert.include(text, `The merchant's callback is queued for ${order.tradeId}.`)
    assert.match(text, new RegExp(`Paid order ${order.tradeId} ?, by ${user.email}`))
    assert.notInclude(after.text, `/unmatched/${payment.id}/assign`)
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const actions = (
      await db
        .from('audit_log')
        .whereNot('action', 'like', 'auth.%')
        .whereNot('action', 'like', 'user.%')
        .orderBy('id')
        .select('action', 'actor')
    ).map((row) => [row.action, row.actor])
    assert.deepEqual(actions, [
      ['unmatched.assign', user.email],
      ['order.mark_paid', user.email],
    ])

    // Twice: refused with the reason, nothing more written.
    const again = await agent.post(`/unmatched/${payment.id}/assign`, { trade_id: order.tradeId })
    assert.equal(again.location, `/admin/unmatched/${payment.id}`)
    assert.include(
      pageText((await agent.get(`/unmatched/${payment.id}`)).text),
      `already assigned to order ${order.tradeId}`
    )
    assert.equal(await changes(), 2)
  })

  test('assigning to an order of another amount is refused with the reason; the typed trade_id is kept', async ({
    client,
    assert,
  }) => {
    const { payment } = await lateTransfer(client)
    const other = await newOrder(client)
    const { agent } = await signedIn()
    await agent.get(`/unmatched/${payment.id}`)
    const refused = await agent.post(`/unmatched/${payment.id}/assign`, { trade_id: other.tradeId })
    assert.equal(refused.location, `/admin/unmatched/${payment.id}`)
    const page = await agent.get(`/unmatched/${payment.id}`)
    assert.include(
      pageText(page.text),
      `cannot pay order ${other.tradeId}: it transfers ${payment.amount} USDT, the order waits for ${other.actualAmount} USDT`
    )
    assert.match(page.text, new RegExp(`name="trade_id"[^>]*value="${other.tradeId}"`))
    const blank = await agent.post(`/unmatched/${payment.id}/assign`, { trade_id: '  ' })
    assert.equal(blank.status, 302)
    assert.include(
      pageText((await agent.get(`/unmatched/${payment.id}`)).text),
      'Give the trade_id of the order this payment pays'
    )
    assert.equal((await Order.findOrFail(other.id)).status, 1)
    assert.equal(await changes(), 0)
  })

  test('dismiss with a note: stored and shown; without a note refused', async ({
    client,
    assert,
  }) => {
    const { payment } = await lateTransfer(client)
    const { agent, user } = await signedIn()
    await agent.get(`/unmatched/${payment.id}`)
    const blank = await agent.post(`/unmatched/${payment.id}/dismiss`, { note: '   ' })
    assert.equal(blank.location, `/admin/unmatched/${payment.id}`)
    assert.include(
      pageText((await agent.get(`/unmatched/${payment.id}`)).text),
      'a note is required'
    )
    assert.equal(await changes(), 0)

    const dismissed = await agent.post(`/unmatched/${payment.id}/dismiss`, {
      note: 'Refunded to the payer, ticket 4411',
    })
    assert.equal(dismissed.location, `/admin/unmatched/${payment.id}`)
    const page = pageText((await agent.get(`/unmatched/${payment.id}`)).text)
    assert.include(page, `Unmatched payment #${payment.id} is dismissed.`)
    assert.include(page, 'Refunded to the payer, ticket 4411')
    assert.include(page, `Dismissed by ${user.email}`)
    const [row] = await db.from('audit_log').where('action', 'unmatched.dismiss')
    assert.equal(row.actor, user.email)
    assert.equal((await agent.get('/unmatched/424242')).status, 404)
  })

  test('a viewer reads the pages; assign and dismiss are 403 and change nothing', async ({
    client,
    assert,
  }) => {
    const { order, payment } = await lateTransfer(client)
    const { agent } = await signedIn('viewer')
    assert.equal((await agent.get('/unmatched')).status, 200)
    assert.equal((await agent.get(`/unmatched/${payment.id}`)).status, 200)
    assert.equal(
      (await agent.post(`/unmatched/${payment.id}/assign`, { trade_id: order.tradeId })).status,
      403
    )
    assert.equal((await agent.post(`/unmatched/${payment.id}/dismiss`, { note: 'no' })).status, 403)
    assert.equal((await Order.findOrFail(order.id)).status, 3)
    const fresh = await UnmatchedPayment.findOrFail(payment.id)
    assert.isTrue(fresh.isOpen)
    assert.equal(await changes(), 0)
  })
})
