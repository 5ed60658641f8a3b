import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import Chain from '#models/chain'
import Order from '#models/order'
import UnmatchedPayment from '#models/unmatched_payment'
import chainScanner from '#services/chain_scanner'
import orderExpiry from '#services/order_expiry'
import reorgFlags from '#services/reorg_flags'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { FAKE_NETWORK, fakeFamily, fakeTransfer } from '#tests/helpers/fake_chain'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'

/** An order whose life ended, then a transfer of its amount: kept as unmatched by the scanner. */
async function latePayment(client: any) {
  const order = await newOrder(client)
  await db
    .from('orders')
    .where('id', order.id)
    .update({ expiration_time: Date.now() - 1000 })
  await orderExpiry.expireDue()
  const reference = '0xzhlate000001'
  fakeFamily.pending = [fakeTransfer(reference, order.actualAmount)]
  await chainScanner.scan({ network: FAKE_NETWORK })
  return UnmatchedPayment.findByOrFail('reference', reference)
}

/** A paid order whose block 120 a reorganisation replaced: kind `reorged`, naming the order. */
async function reorged(client: any) {
  const order = await newOrder(client)
  const reference = '0xzhreorged0001'
  fakeFamily.pending = [
    fakeTransfer(reference, order.actualAmount, {
      position: 'log:3',
      block: { number: '120', hash: `0x${'c3'.repeat(32)}` },
    }),
  ]
  await chainScanner.scan({ network: FAKE_NETWORK })
  await reorgFlags.flag(await Chain.findByOrFail('network', FAKE_NETWORK), {
    ancestor: '100',
    replacedUpTo: '130',
  })
  const row = await db
    .from('unmatched_payments')
    .where('reference', reference)
    .where('kind', 'reorged')
    .first()
  return { order: await Order.findOrFail(order.id), row }
}

test.group('Console unmatched payments in Chinese', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
    await emptyAuditLog()
  })

  test('the inbox, a transfer and its dismissal speak Chinese', async ({ client, assert }) => {
    const agent = await adminReading()
    const empty = await agent.get('/unmatched')
    assertChinese(assert, empty, [], 'empty')
    assert.include(pageText(empty.text), '没有等待你处理的付款')

    const payment = await latePayment(client)
    const list = await agent.get('/unmatched')
    assertChinese(assert, list, [], 'list')
    const text = pageText(list.text)
    for (const words of [
      '有 1 笔等待你处理。',
      '未匹配付款，最新的在前',
      '未匹配到订单',
      '待处理',
      '全部类型',
      '等待你处理',
      '显示 1 笔',
    ])
      assert.include(text, words)

    const page = await agent.get(`/unmatched/${payment.id}`)
    assertChinese(assert, page, [], 'transfer')
    const detail = pageText(page.text)
    for (const words of [`未匹配付款 #${payment.id}`, '上收到', '分配给订单', '忽略这笔付款'])
      assert.include(detail, words)

    await agent.post(`/unmatched/${payment.id}/dismiss`, { note: '已退款给付款人' })
    const after = pageText((await agent.get(`/unmatched/${payment.id}`)).text)
    assert.include(after, `未匹配付款 #${payment.id} 已忽略。`)
    assert.include(after, '已忽略')
    assert.include(after, '已退款给付款人')

    const missing = await agent.get('/unmatched/424242')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有这个 ID 的未匹配付款。')
  })

  test('a reorganised payment: the notice and the order page speak Chinese', async ({
    client,
    assert,
  }) => {
    const agent = await adminReading()
    const { order, row } = await reorged(client)
    const notice = await agent.get(`/unmatched/${row.id}`)
    assertChinese(assert, notice, [], 'notice')
    const text = pageText(notice.text)
    for (const words of ['链重组影响的付款', '发生了什么', '位置 日志 3 (log:3)', '标记为已处理'])
      assert.include(text, words)
    assert.include(text, `上订单 ${order.tradeId} 的付款所在的区块已被链重组替换。`)

    const orderPage = await agent.get(`/orders/${order.tradeId}`)
    assertChinese(assert, orderPage, [], 'order page')
    const shown = pageText(orderPage.text)
    assert.include(shown, '该订单的付款可能已丢失：链重组替换了它所在的区块')
    assert.include(shown, '（日志 3）来自区块 120')
    assert.include(shown, `查看未匹配付款 #${row.id} ，等待你处理`)
    assert.include(shown, '区块已被替换 日志 3 · 区块 120')

    await agent.post(`/unmatched/${row.id}/dismiss`, { note: '已在新链中找到' })
    assert.include(
      pageText((await agent.get(`/unmatched/${row.id}`)).text),
      `未匹配付款 #${row.id} 已标记为已处理。`
    )
    assert.include(
      pageText((await agent.get(`/orders/${order.tradeId}`)).text),
      `未匹配付款 #${row.id} 已标记为已处理。`
    )
  })
})
