import { test } from '@japa/runner'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import { insertOrders } from '#tests/helpers/order_rows'
import { newOrder } from '#tests/helpers/orders'
import { merchantForGroup } from '#tests/helpers/merchant_group'

test.group('Console orders in Chinese', (group) => {
  const merchant = merchantForGroup(group)

  test('the list, its filters and its empty states speak Chinese', async ({ assert }) => {
    const agent = await adminReading()
    const empty = await agent.get('/orders')
    assertChinese(assert, empty, [], 'no orders')
    assert.include(pageText(empty.text), '还没有订单')

    await insertOrders(60, (index) => ({ status: (index % 4) + 1 }))
    const list = await agent.get('/orders')
    assertChinese(assert, list, [], 'list')
    const text = pageText(list.text)
    for (const words of ['订单', '导出 CSV', '全部状态', '交易号', '待支付', '已支付', '已过期'])
      assert.include(text, words)
    assert.include(text, '本页 50 个订单（每页 50 个），最新的在前。')
    assert.include(text, 'CSV 导出内容为筛选后的列表')
    assert.include(list.text, '<title>订单 · 网关控制台</title>')

    const none = await agent.get('/orders?q=no-such-order')
    assertChinese(assert, none, [], 'no match')
    assert.include(pageText(none.text), '没有订单符合这些筛选条件和搜索内容。')

    const invalid = await agent.get('/orders?status=9')
    assert.include(pageText((await agent.get(invalid.location!)).text), '部分筛选条件无效')
  })

  test('an order page and the flash of an action speak Chinese', async ({ client, assert }) => {
    const agent = await adminReading()
    const paid = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(paid.id, { reference: '0xzh00000001', source: 'scanner' })
    await callbackDeliverer.runOnce()
    const page = await agent.get(`/orders/${paid.tradeId}`)
    assertChinese(assert, page, [], 'paid order')
    const text = pageText(page.text)
    for (const words of [
      `订单 ${paid.tradeId}`,
      '收款信息',
      '金额锁定',
      '付款交易',
      'fakenet · 扫链',
      '整笔交易',
      '商户回调',
      '已送达',
      '回调尝试记录',
      '已确认',
      '操作记录',
    ])
      assert.include(text, words)

    const waiting = await newOrder(client)
    await agent.get(`/orders/${waiting.tradeId}`)
    const closed = await agent.post(`/orders/${waiting.tradeId}/close`)
    const after = pageText((await agent.get(closed.location!)).text)
    assert.include(after, `订单 ${waiting.tradeId} 已关闭：无法再支付`)
    assert.include(after, '已过期')

    const missing = await agent.get('/orders/NoSuchOrder123')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有交易号为 NoSuchOrder123 的订单。')
  })
})
