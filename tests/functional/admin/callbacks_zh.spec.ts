import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import i18nManager from '@adonisjs/i18n/services/main'
import Callback from '#models/callback'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { batchMessage } from '#services/operators/callback_admin'
import { merchantForGroup, paidOrder } from '#tests/helpers/merchant_group'
import { pageText } from '#tests/helpers/admin'
import { giveUpCallback, redeliverFailed } from '#tests/helpers/admin_callbacks'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'

test.group('Console callbacks in Chinese', (group) => {
  const merchant = merchantForGroup(group)

  test('the list and a callback page speak Chinese; a redelivery’s flash too', async ({
    client,
    assert,
  }) => {
    const agent = await adminReading()
    assertChinese(assert, await agent.get('/callbacks'), ['还没有回调', '请先至少选择一个筛选条件'])

    const delivered = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    const held = await paidOrder(client, merchant)
    await db.from('callbacks').where('order_id', held.id).update({ format: 'retired' })

    const list = await agent.get('/callbacks')
    assertChinese(assert, list, [
      '回调，最新的在前',
      '尝试次数',
      '最近应答',
      '显示 2 个',
      '批量重新发送',
    ])
    assert.match(pageText(list.text), /全部 待发送 0 已暂停 1 失败 0 已送达 1/)

    const callback = await Callback.findByOrFail('order_id', delivered.id)
    assertChinese(assert, await agent.get(`/callbacks/${callback.id}`), [
      `通知商户订单 ${delivered.tradeId} 已支付。`,
      '已送达',
      '商户已于',
      '该回调的尝试记录',
      '重新发送',
    ])

    const heldCallback = await Callback.findByOrFail('order_id', held.id)
    assert.include(pageText((await agent.get(`/callbacks/${heldCallback.id}`)).text), '格式未加载')
    await agent.post(`/callbacks/${heldCallback.id}/redeliver`, {})
    assert.include(
      pageText((await agent.get(`/callbacks/${heldCallback.id}`)).text),
      '已重新加入队列，但已暂停'
    )

    await giveUpCallback(delivered)
    await redeliverFailed(agent)
    assert.include(
      pageText((await agent.get('/callbacks?status=failed')).text),
      '已将 1 个回调重新加入队列。'
    )
    assert.equal((await agent.get('/callbacks/999999')).status, 404)
    assert.include(pageText((await agent.get('/callbacks/999999')).text), '没有这个 ID 的回调。')
  })

  test('the batch flash says in English what batchMessage says', ({ assert }) => {
    const english = i18nManager.locale('en')
    for (const result of [
      { queued: 0, capped: false, cap: 500, held: 0 },
      { queued: 1, capped: false, cap: 500, held: 0 },
      { queued: 3, capped: false, cap: 500, held: 1 },
      { queued: 500, capped: true, cap: 500, held: 2 },
      { queued: 1000, capped: true, cap: 1000, held: 1200 },
      { queued: 0, capped: false, cap: 500, held: 1 },
    ]) {
      assert.equal(
        english.t('admin.callbacks.flash.batch', {
          ...result,
          capped: result.capped ? 'yes' : 'no',
        }),
        `${batchMessage(result)}.`
      )
    }
  })
})
