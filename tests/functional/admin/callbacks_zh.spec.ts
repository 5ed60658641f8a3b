import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import i18nManager from '@adonisjs/i18n/services/main'
import Callback from '#models/callback'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { batchMessage } from '#services/operators/callback_admin'
import { merchantForGroup, paidOrder } from '#tests/helpers/merchant_group'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

test.group('Console callbacks in Chinese', (group) => {
  const merchant = merchantForGroup(group)

  test('the list and a callback page speak Chinese; a redelivery’s flash too', async ({
    client,
    assert,
  }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    agent.headers['accept-language'] = 'zh-CN'
    const empty = await agent.get('/callbacks')
    assert.include(empty.text, '<html lang="zh-CN">')
    assert.include(pageText(empty.text), '还没有回调')
    assert.include(pageText(empty.text), '请先至少选择一个筛选条件')

    const delivered = await paidOrder(client, merchant)
    await callbackDeliverer.runOnce()
    const held = await paidOrder(client, merchant)
    await db.from('callbacks').where('order_id', held.id).update({ format: 'retired' })

    const list = await agent.get('/callbacks')
    assert.include(list.text, '<html lang="zh-CN">')
    assert.notInclude(list.text, 'translation missing')
    const text = pageText(list.text)
    assert.match(text, /全部 待发送 0 已暂停 1 失败 0 已送达 1/)
    for (const words of ['回调，最新的在前', '尝试次数', '最近应答', '显示 2 个', '批量重新发送'])
      assert.include(text, words)

    const callback = await Callback.findByOrFail('order_id', delivered.id)
    const page = await agent.get(`/callbacks/${callback.id}`)
    assert.include(page.text, '<html lang="zh-CN">')
    assert.notInclude(page.text, 'translation missing')
    const detail = pageText(page.text)
    assert.include(detail, `通知商户订单 ${delivered.tradeId} 已支付。`)
    for (const words of ['已送达', '商户已于', '该回调的尝试记录', '重新发送'])
      assert.include(detail, words)

    const heldCallback = await Callback.findByOrFail('order_id', held.id)
    assert.include(pageText((await agent.get(`/callbacks/${heldCallback.id}`)).text), '格式未加载')
    await agent.post(`/callbacks/${heldCallback.id}/redeliver`, {})
    assert.include(
      pageText((await agent.get(`/callbacks/${heldCallback.id}`)).text),
      '已重新加入队列，但已暂停'
    )

    await db
      .from('callbacks')
      .where('order_id', delivered.id)
      .update({ status: 'failed', attempts: 7 })
    await agent.get('/callbacks?status=failed')
    await agent.post('/callbacks/redeliver', {
      status: 'failed',
      pid: '',
      network: '',
      from: '',
      to: '',
      q: '',
    })
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
