import apiKeyAdmin from '#services/operators/api_key_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import type Order from '#models/order'
import Callback from '#models/callback'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { countRows, emptyAuditLog } from '#tests/helpers/database'
import { newOrder } from '#tests/helpers/orders'
import { merchantForGroup, paidOrder } from '#tests/helpers/merchant_group'
import { TEST_SECRET } from '#tests/helpers/merchant'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { giveUpCallback, redeliverFailed } from '#tests/helpers/admin_callbacks'

async function callbackOf(order: Order) {
  return Callback.findByOrFail('order_id', order.id)
}

async function signedIn(role: 'admin' | 'viewer' = 'admin') {
  const user = await createAdminUser({ role })
  return { user, agent: await AdminAgent.signIn(user) }
}

test.group('Console callbacks pages', (group) => {
  const merchant = merchantForGroup(group)
  group.each.setup(async () => {
    await emptyAuditLog()
  })

  test('the list: status tabs with counts, filters, every state designed', async ({
    client,
    assert,
  }) => {
    const { agent } = await signedIn()
    const empty = await agent.get('/callbacks')
    assert.equal(empty.status, 200)
    assert.include(pageText(empty.text), 'No callback yet')
    assert.include(pageText(empty.text), 'Choose at least one filter first')

    await apiKeyAdmin.create({ pid: '2000', secret: TEST_SECRET })
    const delivered = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    const other = await paidOrder(client, merchant, { pid: '2000', order_id: 'shop-77' })
    const held = await paidOrder(client, merchant)
    await db.from('callbacks').where('order_id', held.id).update({ format: 'retired' })

    const all = await agent.get('/callbacks')
    const text = pageText(all.text)
    for (const order of [delivered, other, held]) assert.include(all.text, order.tradeId)
    assert.match(text, /Pending 1 Held 1 Failed 0 Delivered 1/)
    assert.include(text, 'shop-77')

    const byPid = await agent.get('/callbacks?pid=2000')
    assert.include(byPid.text, other.tradeId)
    assert.notInclude(byPid.text, delivered.tradeId)
    assert.include(pageText(byPid.text), 'Send the matching callbacks again')
    const heldOnly = await agent.get('/callbacks?status=held')
    assert.include(heldOnly.text, held.tradeId)
    assert.notInclude(heldOnly.text, other.tradeId)
    const search = await agent.get(`/callbacks?q=${delivered.tradeId}`)
    assert.include(search.text, delivered.tradeId)
    assert.notInclude(search.text, held.tradeId)
    const none = await agent.get('/callbacks?network=nowhere')
    assert.include(pageText(none.text), 'No callback matches these filters')

    const today = new Date().toISOString().slice(0, 10)
    const byDay = await agent.get(`/callbacks?from=${today}&to=${today}`)
    assert.include(byDay.text, delivered.tradeId)
    assert.notInclude((await agent.get('/callbacks?to=2001-01-01')).text, delivered.tradeId)
    const badDay = await agent.get('/callbacks?from=2024-02-30')
    assert.equal(badDay.status, 200)
    assert.include(pageText(badDay.text), 'No such day: 2024-02-30')
    const badStatus = await agent.get('/callbacks?status=lost')
    assert.equal(badStatus.status, 400)
  })

  test('keyset pages: first page, next page, no row twice', async ({ client, assert }) => {
    const made: Order[] = []
    for (let index = 0; index < 52; index++) {
      const order = await newOrder(client, { notify_url: merchant.notifyUrl })
      await paymentService.markPaid(order.id, {
        reference: `tx-${order.tradeId}`,
        source: 'scanner',
      })
      made.push(order)
    }
    const { agent } = await signedIn()
    const first = await agent.get('/callbacks')
    const next = /href="(\/admin\/callbacks\?after=\d+)" rel="next"/.exec(first.text)![1]
    const second = await agent.get(next)
    const ids = (html: string) =>
      [...html.matchAll(/href="\/admin\/callbacks\/(\d+)"/g)].map((match) => match[1])
    assert.lengthOf(ids(first.text), 50)
    assert.lengthOf(ids(second.text), 2)
    assert.lengthOf(new Set([...ids(first.text), ...ids(second.text)]), 52)
    assert.include(second.text, made[0].tradeId)
    assert.include(second.text, 'href="/admin/callbacks">« First page')
    assert.notMatch(second.text, /rel="next"/)
  })

  test('the detail: every attempt with HTTP status, duration and excerpt', async ({
    client,
    assert,
  }) => {
    merchant.reset([
      { status: 503, body: 'busy, later' },
      { status: 200, body: 'ok' },
    ])
    const order = await paidOrder(client, merchant, { order_id: 'shop-detail' })
    await callbackDeliverer.runOnce()
    await db.from('callbacks').where('order_id', order.id).update({ next_attempt_at: 0 })
    await callbackDeliverer.runOnce()
    const callback = await callbackOf(order)
    const { agent } = await signedIn()
    const page = await agent.get(`/callbacks/${callback.id}`)
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    assert.include(text, `Telling the merchant that order ${order.tradeId} is paid.`)
    assert.include(text, 'shop-detail')
    assert.include(text, 'HTTP 503')
    assert.include(text, 'busy, later')
    assert.include(text, 'HTTP 200')
    assert.match(text, /\d+ ms/)
    assert.include(text, merchant.notifyUrl)
    assert.equal((await agent.get('/callbacks/999999')).status, 404)
    assert.equal((await agent.get('/callbacks/abc')).status, 404)
  })

  test("send one again: through OrderAdmin (as callbacks:redeliver), the merchant's answer said, audited", async ({
    client,
    assert,
  }) => {
    const order = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    const callback = await callbackOf(order)
    const { agent, user } = await signedIn()
    const sent = await agent.submit(
      `/callbacks/${callback.id}/redeliver`,
      {},
      `/callbacks/${callback.id}`
    )
    assert.equal(sent.status, 302)
    assert.equal(sent.location, `/admin/callbacks/${callback.id}`)
    assert.match(
      pageText((await agent.get(`/callbacks/${callback.id}`)).text),
      /Sent again: the merchant acknowledged it \(HTTP 200 in \d+ ms\)/
    )
    assert.lengthOf(merchant.requests, 2)
    const [row] = await db.from('audit_log').where('action', 'order.callback_resend')
    assert.include(row, { subject_id: order.tradeId, actor: user.email })

    merchant.reset([{ status: 500, body: 'down' }])
    await agent.post(`/callbacks/${callback.id}/redeliver`, {})
    assert.include(
      pageText((await agent.get(`/callbacks/${callback.id}`)).text),
      'Sent again but not acknowledged: not acknowledged: HTTP 500'
    )
    assert.equal((await callbackOf(order)).status, 'pending')

    // A held callback offers no button: nothing can go out while its plugin is off.
    const held = await paidOrder(client, merchant)
    await db.from('callbacks').where('order_id', held.id).update({ format: 'retired' })
    const heldCallback = await callbackOf(held)
    const heldPage = await agent.get(`/callbacks/${heldCallback.id}`)
    assert.include(pageText(heldPage.text), 'format is not loaded')
    assert.notInclude(heldPage.text, `/callbacks/${heldCallback.id}/redeliver`)
    await agent.post(`/callbacks/${heldCallback.id}/redeliver`, {})
    assert.include(
      pageText((await agent.get(`/callbacks/${heldCallback.id}`)).text),
      'Queued again, but held'
    )
    assert.equal((await callbackOf(held)).attempts, 0)

    const unpaid = await newOrder(client)
    await db.table('callbacks').insert({
      order_id: unpaid.id,
      format: 'native',
      status: 'failed',
      attempts: 1,
      next_attempt_at: 0,
      last_error: '',
      created_at: Date.now(),
      updated_at: Date.now(),
    })
    const orphan = await callbackOf(unpaid)
    await agent.post(`/callbacks/${orphan.id}/redeliver`, {})
    assert.include(
      pageText((await agent.get(`/callbacks/${orphan.id}`)).text),
      'is not paid (status 1); there is nothing to tell'
    )
  })

  test('send a filtered batch again: the count is said; no filter or an unreadable day is refused', async ({
    client,
    assert,
  }) => {
    merchant.reset([{ status: 500, body: 'no' }])
    const failed: Order[] = []
    for (let index = 0; index < 3; index++) failed.push(await paidOrder(client, merchant))
    for (const order of failed) await giveUpCallback(order)
    const untouched = await paidOrder(client, merchant)

    const { agent } = await signedIn()
    const sent = await redeliverFailed(agent)
    assert.equal(sent.location, '/admin/callbacks?status=failed')
    assert.include(
      pageText((await agent.get('/callbacks?status=failed')).text),
      '3 callbacks queued again.'
    )
    for (const order of failed) assert.equal((await callbackOf(order)).status, 'pending')
    assert.equal((await callbackOf(untouched)).attempts, 0)
    assert.equal(await countRows('audit_log', { action: 'order.callback_resend' }), 3)

    const noFilter = await agent.post('/callbacks/redeliver', { status: '', pid: '' })
    assert.equal(noFilter.status, 302)
    assert.include(
      pageText((await agent.get('/callbacks')).text),
      'Choose at least one filter before sending a batch'
    )
    await agent.post('/callbacks/redeliver', { status: 'failed', from: '2024-02-30' })
    assert.include(
      pageText((await agent.get('/callbacks')).text),
      'No such day: 2024-02-30. Nothing was sent again.'
    )
    assert.equal(await countRows('audit_log', { action: 'order.callback_resend' }), 3)
  })

  test('a viewer reads the pages; both POSTs are 403 and change nothing', async ({
    client,
    assert,
  }) => {
    const order = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    const callback = await callbackOf(order)
    const { agent } = await signedIn('viewer')
    assert.equal((await agent.get('/callbacks')).status, 200)
    assert.equal((await agent.get(`/callbacks/${callback.id}`)).status, 200)
    assert.equal((await agent.post(`/callbacks/${callback.id}/redeliver`, {})).status, 403)
    assert.equal((await agent.post('/callbacks/redeliver', { status: 'delivered' })).status, 403)
    assert.equal((await callbackOf(order)).status, 'delivered')
    assert.equal(await countRows('audit_log', { action: 'order.callback_resend' }), 0)
  })
})
