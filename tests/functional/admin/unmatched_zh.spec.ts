import { test } from '@japa/runner'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { prepareLifecycle } from '#tests/helpers/orders'
import { pageText } from '#tests/helpers/admin'
import { latePayment, reorgedPayment } from '#tests/helpers/unmatched_payments'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'

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

    const { payment } = await latePayment(client, '0xzhlate000001')
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
    const { order, row } = await reorgedPayment(client, '0xzhreorged0001')
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
