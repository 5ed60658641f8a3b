import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { countRows, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText, type AdminUser } from '#tests/helpers/admin'
import { insertOrders } from '#tests/helpers/order_rows'
import { newOrder, newPlaceholder } from '#tests/helpers/orders'
import { fakeTransfer } from '#tests/helpers/fake_chain'
import { merchantForGroup } from '#tests/helpers/merchant_group'

const BASE = 1_700_000_000_000

/** The trade IDs listed on a page of the order list, in order. */
function listed(html: string) {
  return [...html.matchAll(/<a class="mono" href="\/admin\/orders\/([A-Za-z0-9]+)">/g)].map(
    (match) => match[1]
  )
}

function hrefOf(html: string, rel: string) {
  const match = new RegExp(`href="([^"]+)" rel="${rel}"`).exec(html)
  return match ? match[1].replaceAll('&amp;', '&') : null
}

/** 60 orders T00000000..T00000059, one second apart; every third paid. */
async function seedList() {
  return insertOrders(60, (index) => ({
    status: index % 3 === 0 ? 2 : 1,
    network: index % 2 === 0 ? 'tron' : 'ethereum',
    created_at: BASE + index * 1000,
  }))
}

async function auditCount(action: string) {
  return countRows('audit_log', { action })
}

test.group('Console orders: list', (group) => {
  let admin: AdminUser
  group.each.setup(async () => {
    await resetDatabase()
    admin = await createAdminUser()
  })

  test('signed out, the list sends to the sign-in page', async ({ assert }) => {
    const response = await new AdminAgent().get('/orders')
    assert.equal(response.status, 302)
    assert.equal(response.location, '/admin/login')
  })

  test('newest first, 50 per page; Next and Previous walk the pages without gaps', async ({
    assert,
  }) => {
    await seedList()
    const agent = await AdminAgent.signIn(admin)
    const first = await agent.get('/orders')
    assert.equal(first.status, 200)
    const firstIds = listed(first.text)
    assert.lengthOf(firstIds, 50)
    assert.equal(firstIds[0], 'T00000059')
    assert.isNull(hrefOf(first.text, 'prev'))
    const next = hrefOf(first.text, 'next')!
    const second = await agent.get(next)
    const secondIds = listed(second.text)
    assert.deepEqual(secondIds, [
      'T00000009',
      'T00000008',
      'T00000007',
      'T00000006',
      'T00000005',
      'T00000004',
      'T00000003',
      'T00000002',
      'T00000001',
      'T00000000',
    ])
    assert.isNull(hrefOf(second.text, 'next'))
    assert.include(pageText(second.text), '« Newest')
    const back = await agent.get(hrefOf(second.text, 'prev')!)
    assert.deepEqual(listed(back.text), firstIds)
  })

  test('filters narrow the list, stay in the form and in the Next and export links', async ({
    assert,
  }) => {
    await seedList()
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get('/orders?status=2&network=tron&q=&token=')
    const ids = listed(page.text)
    // Paid (every third) and on tron (even): every sixth.
    assert.deepEqual(ids, [
      'T00000054',
      'T00000048',
      'T00000042',
      'T00000036',
      'T00000030',
      'T00000024',
      'T00000018',
      'T00000012',
      'T00000006',
      'T00000000',
    ])
    assert.match(page.text, /<option value="2" selected>paid<\/option>/)
    assert.match(page.text, /<option value="tron" selected>/)
    assert.include(page.text, 'href="/admin/orders/export.csv?status=2&amp;network=tron"')
    assert.include(page.text, 'href="/admin/orders"')

    const byDay = await agent.get(
      `/orders?from=${new Date(BASE + 50_000).toISOString().slice(0, 10)}`
    )
    assert.lengthOf(listed(byDay.text), 50)
    await db
      .from('orders')
      .where('trade_id', 'T00000001')
      .update({ created_at: Date.UTC(2020, 0, 2, 12) })
    const oneDay = await agent.get('/orders?from=2020-01-02&to=2020-01-02')
    assert.deepEqual(listed(oneDay.text), ['T00000001'])
    const dayBefore = await agent.get('/orders?from=2020-01-01&to=2020-01-01')
    assert.lengthOf(listed(dayBefore.text), 0)
  })

  test('the search box finds an order by trade ID, order number, address or transaction', async ({
    assert,
  }) => {
    await insertOrders(3, (index) => ({
      block_transaction_id: index === 2 ? '0xabc' : '',
      receive_address: `TAddr${index}`,
    }))
    const agent = await AdminAgent.signIn(admin)
    for (const [term, expected] of [
      ['T00000001', ['T00000001']],
      ['ORD-2', ['T00000002']],
      ['TAddr0', ['T00000000']],
      ['0xabc', ['T00000002']],
    ] as const) {
      const page = await agent.get(`/orders?q=${encodeURIComponent(term)}`)
      assert.deepEqual(listed(page.text), [...expected], term)
      assert.include(page.text, `value="${term}"`)
    }
  })

  test('nothing matching: "No orders match" with a reset link; no orders at all: "No orders yet"', async ({
    assert,
  }) => {
    const agent = await AdminAgent.signIn(admin)
    const empty = await agent.get('/orders')
    assert.include(pageText(empty.text), 'No orders yet')
    await seedList()
    const none = await agent.get('/orders?q=nothing-like-this')
    assert.include(pageText(none.text), 'No orders match')
    assert.match(
      none.text,
      /<a class="btn btn-primary" href="\/admin\/orders">Reset the filters<\/a>/
    )
    assert.lengthOf(listed(none.text), 0)
  })

  test('an invalid filter is shown with its message, never a 500', async ({ assert }) => {
    await seedList()
    const agent = await AdminAgent.signIn(admin)
    const refused = await agent.get('/orders?status=9&from=2024-02-30&network=tron')
    assert.equal(refused.status, 302)
    assert.equal(refused.location, '/admin/orders')
    const page = await agent.get('/orders')
    const text = pageText(page.text)
    assert.include(text, 'Some filters are not valid')
    assert.match(page.text, /<p class="field-error" id="f-status-error">[^<]+<\/p>/)
    assert.match(page.text, /<p class="field-error" id="f-from-error">[^<]+<\/p>/)
    assert.lengthOf(listed(page.text), 50)
    const backwards = await agent.get('/orders?from=2024-03-02&to=2024-03-01')
    assert.equal(backwards.status, 302)
    const again = await agent.get('/orders')
    assert.match(again.text, /<p class="field-error" id="f-to-error">[^<]+<\/p>/)
  })

  test('the CSV export streams the filtered list with escaped cells', async ({ assert }) => {
    await seedList()
    await db.from('orders').where('trade_id', 'T00000054').update({ name: '=cmd|"/c calc"!A1' })
    const viewer = await AdminAgent.signIn(await createAdminUser({ role: 'viewer' }))
    const response = await viewer.get('/orders/export.csv?status=2&network=tron')
    assert.equal(response.status, 200)
    assert.match(response.headers.get('content-type')!, /^text\/csv; charset=utf-8/)
    assert.match(
      response.headers.get('content-disposition')!,
      /^attachment; filename="orders-\d{8}-\d{4}\.csv"$/
    )
    const lines = response.text.split('\r\n').filter(Boolean)
    assert.lengthOf(lines, 11)
    assert.match(lines[0], /^created_at,trade_id,order_id,/)
    assert.include(lines[1], ',T00000054,')
    assert.include(lines[1], `,"'=cmd|""/c calc""!A1",`)
    const bad = await viewer.get('/orders/export.csv?status=x')
    assert.equal(bad.status, 302)
  })
})

test.group('Console orders: order page and actions', (group) => {
  const merchant = merchantForGroup(group)
  let admin: AdminUser
  group.each.setup(async () => {
    admin = await createAdminUser({ email: 'ops@example.com' })
  })

  test('the page shows every section of a waiting order, with its actions', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { name: 'Blue <b>shirt</b>' })
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get(`/orders/${order.tradeId}`)
    assert.equal(page.status, 200)
    const text = pageText(page.text)
    for (const part of [
      'Order ' + order.tradeId,
      order.orderId,
      'Amount reservation',
      order.receiveAddress,
      'Payment reference',
      'Merchant callback',
      'History',
      'Verify and mark paid',
      'Close order',
    ]) {
      assert.include(text, part)
    }
    assert.include(text, `Reserved ${order.actualAmount} USDT on fakenet`)
    assert.include(page.text, 'Blue &lt;b&gt;shirt&lt;/b&gt;')
    assert.include(text, 'is not paid (status 1); there is nothing to tell')
  })

  test('a paid order shows its reference and every callback attempt: HTTP status, duration, response', async ({
    client,
    assert,
  }) => {
    merchant.reset([
      { status: 502, body: 'bad gateway <html>' },
      { status: 200, body: 'success' },
    ])
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(order.id, { reference: '0xpaid000001', source: 'scanner' })
    await callbackDeliverer.runOnce()
    await db.from('callbacks').update({ next_attempt_at: 0 })
    await callbackDeliverer.runOnce()
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get(`/orders/${order.tradeId}`)
    const text = pageText(page.text)
    assert.include(text, '0xpaid000001')
    assert.include(text, 'fakenet · scanner')
    const rows = [...page.text.matchAll(/<tr>\s*<td class="num">(\d+)<\/td>[\s\S]*?<\/tr>/g)].map(
      (match) => pageText(match[0])
    )
    assert.lengthOf(rows, 2)
    assert.match(
      rows[0],
      /^1 .* POST http:\/\/127\.0\.0\.1:\d+\/notify 502 \d+ ms refused not acknowledged: HTTP 502.* bad gateway <html>$/
    )
    assert.match(rows[1], /^2 .* 200 \d+ ms acknowledged success$/)
    assert.include(page.text, 'bad gateway &lt;html&gt;')
    assert.include(text, 'Mark paid')
    assert.include(text, 'has status 2; only 1 or 3 can be repaired')
    assert.include(text, 'Send the callback again')
  })

  test('an unknown order is the 404 page', async ({ assert }) => {
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get('/orders/NoSuchOrder123')
    assert.equal(page.status, 404)
    assert.include(pageText(page.text), 'No order has the trade_id NoSuchOrder123')
    const post = await agent.post('/orders/NoSuchOrder123/close')
    assert.equal(post.status, 404)
  })

  test('mark paid: a transaction the chain confirms pays the order; audited with the user', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    fakeTransfer('0xconsole0009', order.actualAmount)
    const agent = await AdminAgent.signIn(admin)
    await agent.get(`/orders/${order.tradeId}`)
    const response = await agent.post(`/orders/${order.tradeId}/mark-paid`, {
      reference: ' 0xconsole0009 ',
    })
    assert.equal(response.status, 302)
    assert.equal(response.location, `/admin/orders/${order.tradeId}`)
    const page = await agent.get(response.location!)
    assert.include(
      pageText(page.text),
      `Order ${order.tradeId} is paid by 0xconsole0009, verified on fakenet. The merchant's callback is queued.`
    )
    assert.equal((await Order.findOrFail(order.id)).status, 2)
    const [row] = await db.from('audit_log').where('action', 'order.mark_paid')
    assert.equal(row.actor, 'ops@example.com')
    assert.equal(row.subject_id, order.tradeId)
  })

  test('mark paid: a bad reference is refused with what is wrong, the reference kept, nothing written', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const agent = await AdminAgent.signIn(admin)
    await agent.get(`/orders/${order.tradeId}`)
    const refused = await agent.post(`/orders/${order.tradeId}/mark-paid`, {
      reference: '0xunknown0001',
    })
    assert.equal(refused.location, `/admin/orders/${order.tradeId}`)
    const page = await agent.get(refused.location!)
    assert.include(
      pageText(page.text),
      'Transaction check failed: transaction 0xunknown0001 not found'
    )
    assert.include(page.text, 'value="0xunknown0001"')
    const empty = await agent.post(`/orders/${order.tradeId}/mark-paid`, { reference: '  ' })
    assert.equal(empty.status, 302)
    const emptyPage = await agent.get(empty.location!)
    assert.match(emptyPage.text, /<p class="field-error" id="f-reference-error">[^<]+<\/p>/)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await auditCount('order.mark_paid'), 0)
    assert.equal(await countRows('payment_references'), 0)
  })

  test('mark paid on a placeholder is refused (not an on-chain order)', async ({
    client,
    assert,
  }) => {
    const placeholder = await newPlaceholder(client)
    const agent = await AdminAgent.signIn(admin)
    const page = await agent.get(`/orders/${placeholder.tradeId}`)
    assert.include(pageText(page.text), 'is not an on-chain order')
    assert.notInclude(page.text, '/mark-paid"')
    const refused = await agent.post(`/orders/${placeholder.tradeId}/mark-paid`, {
      reference: '0xany',
    })
    const after = await agent.get(refused.location!)
    assert.include(pageText(after.text), `Order ${placeholder.tradeId} is not an on-chain order`)
    assert.equal(await auditCount('order.mark_paid'), 0)
  })

  test('close: a waiting order closes; closing a paid order is refused', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const agent = await AdminAgent.signIn(admin)
    await agent.get(`/orders/${order.tradeId}`)
    const closed = await agent.post(`/orders/${order.tradeId}/close`)
    const page = await agent.get(closed.location!)
    assert.include(
      pageText(page.text),
      `Order ${order.tradeId} is closed: it can no longer be paid`
    )
    assert.equal((await Order.findOrFail(order.id)).status, 3)
    assert.equal(await auditCount('order.close'), 1)

    const paid = await newOrder(client)
    await paymentService.markPaid(paid.id, { reference: '0xpaid000002', source: 'scanner' })
    await agent.get(`/orders/${paid.tradeId}`)
    const refused = await agent.post(`/orders/${paid.tradeId}/close`)
    const refusedPage = await agent.get(refused.location!)
    assert.include(
      pageText(refusedPage.text),
      `Order ${paid.tradeId} is not open (status 2); nothing to close`
    )
    assert.equal((await Order.findOrFail(paid.id)).status, 2)
    assert.equal(await auditCount('order.close'), 1)
  })

  test("resend callback: the merchant's answer is shown; an unpaid order is refused", async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(order.id, { reference: '0xpaid000003', source: 'scanner' })
    const agent = await AdminAgent.signIn(admin)
    await agent.get(`/orders/${order.tradeId}`)
    const sent = await agent.post(`/orders/${order.tradeId}/resend-callback`)
    const page = await agent.get(sent.location!)
    assert.match(
      pageText(page.text),
      new RegExp(
        `The merchant acknowledged the callback of order ${order.tradeId} \\(HTTP 200 in \\d+ ms\\)`
      )
    )
    assert.lengthOf(merchant.requests, 1)

    merchant.reset([{ status: 500, body: 'down' }])
    await agent.post(`/orders/${order.tradeId}/resend-callback`)
    const failed = await agent.get(`/orders/${order.tradeId}`)
    assert.include(
      pageText(failed.text),
      'was sent again but not acknowledged: not acknowledged: HTTP 500'
    )
    assert.equal(await auditCount('order.callback_resend'), 2)

    const unpaid = await newOrder(client)
    await agent.get(`/orders/${unpaid.tradeId}`)
    const refused = await agent.post(`/orders/${unpaid.tradeId}/resend-callback`)
    const refusedPage = await agent.get(refused.location!)
    assert.include(pageText(refusedPage.text), 'is not paid (status 1); there is nothing to tell')
    assert.equal(await auditCount('order.callback_resend'), 2)
  })

  test('a viewer reads the order but every action is refused with 403, nothing written', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    const paid = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(paid.id, { reference: '0xpaid000004', source: 'scanner' })
    fakeTransfer('0xviewer0001', order.actualAmount)
    const viewer = await AdminAgent.signIn(await createAdminUser({ role: 'viewer' }))
    const page = await viewer.get(`/orders/${order.tradeId}`)
    assert.equal(page.status, 200)
    assert.include(pageText(page.text), 'can view orders but not change them')
    assert.notInclude(page.text, '/mark-paid"')
    for (const [tradeId, action, fields] of [
      [order.tradeId, 'mark-paid', { reference: '0xviewer0001' }],
      [order.tradeId, 'close', {}],
      [paid.tradeId, 'resend-callback', {}],
    ] as const) {
      const response = await viewer.post(`/orders/${tradeId}/${action}`, fields)
      assert.equal(response.status, 403, action)
    }
    assert.equal((await Order.findOrFail(order.id)).status, 1)
    assert.equal(await countRows('audit_log', { subject_type: 'order' }), 0)
    assert.lengthOf(merchant.requests, 0)
  })

  test('an action without the CSRF token is refused, nothing written', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const agent = await AdminAgent.signIn(admin)
    const response = await agent.post(`/orders/${order.tradeId}/close`, {}, { csrf: null })
    assert.equal(response.status, 403)
    assert.equal((await Order.findOrFail(order.id)).status, 1)
  })
})
