import { test } from '@japa/runner'
import { pageText } from '#tests/helpers/admin'
import { adminReading, assertChinese } from '#tests/helpers/admin_language'
import { resetDatabase } from '#tests/helpers/database'

test.group('Console API keys in Chinese', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('the list, the new-key form, a key and its secret page speak Chinese', async ({
    assert,
  }) => {
    const agent = await adminReading()
    assertChinese(assert, await agent.get('/api-keys'), [
      'API 密钥',
      '每个商户用其 pid 的密钥为请求签名。',
      '允许的 IP',
      '最近使用',
      '已启用',
    ])
    assertChinese(assert, await agent.get('/api-keys/new'), [
      '创建 API 密钥',
      '留空则使用下一个空闲编号',
      '创建密钥',
    ])
    const created = await agent.submit(
      '/api-keys',
      { pid: 'shop-7', note: '', ips: '' },
      '/api-keys/new'
    )
    assertChinese(assert, created, ['API 密钥 shop-7 已创建', '请现在复制密钥', '我已保存'])
    assertChinese(assert, await agent.get('/api-keys/shop-7'), [
      'API 密钥 shop-7',
      '无备注。',
      '接受签名正确的请求',
      '重置密钥',
      '为 pid shop-7 生成新密钥？',
    ])
    const missing = await agent.get('/api-keys/nope')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有 pid 为 nope 的 API 密钥。')
  })

  test('a flash message comes in Chinese', async ({ assert }) => {
    const agent = await adminReading()
    const disabled = await agent.submit('/api-keys/1000/disable', {}, '/api-keys/1000')
    assert.equal(disabled.location, '/admin/api-keys/1000')
    const page = await agent.get('/api-keys/1000')
    assertChinese(assert, page, ['pid 1000 已停用：在你重新启用之前，其请求都会被拒绝（401）。'])
    await agent.submit('/api-keys/1000', { note: '测试商户', ips: '' }, '/api-keys/1000')
    assert.include(
      pageText((await agent.get('/api-keys/1000')).text),
      '已保存 pid 1000 的备注和允许的 IP。'
    )
  })

  test('the integration page: prose in Chinese, endpoints and code as they are', async ({
    assert,
  }) => {
    const agent = await adminReading()
    const page = await agent.get('/api-keys/1000/integration')
    assertChinese(assert, page, [
      'pid 1000 的接入',
      '请求签名',
      '取除 signature 以外发送的所有字段',
      '创建订单',
      '查询订单',
      'HMAC-SHA256，放在 signature 字段',
      '接收支付回调',
      '发送测试回调',
      '从 epusdt 或 BEpusdt 迁移商户',
      '每个请求都带 pid=1000，参与签名',
      '易支付（兼容）商户',
      '页面跳转：付款人带着已签名的订单字段跳转到这里',
      '原生（POST JSON、HMAC-SHA256）',
      `${process.env.APP_URL}/payments/native/v1/order/create-transaction`,
      `POST ${process.env.APP_URL}/payments/native/v1/order/query`,
    ])
    // The code samples stay code: the same as the English page's.
    const english = await agent.get('/api-keys/1000/integration', { 'accept-language': 'en' })
    const code = (html: string) =>
      [...html.matchAll(/<pre[^>]*>([\s\S]*?)<\/pre>/g)].map((m) => m[1])
    assert.isAbove(code(page.text).length, 3)
    assert.deepEqual(code(page.text), code(english.text))
    assert.include(pageText(english.text), 'Query an order')
  })
})
