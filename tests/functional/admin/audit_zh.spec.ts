import { test } from '@japa/runner'
import { emptyAuditLog, resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'
import { assertChinese, signInReading } from '#tests/helpers/admin_language'

test.group('Console audit log in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('the audit page, its filters and rows speak Chinese; actions’ names and values stay', async ({
    assert,
  }) => {
    const { admin: viewer, agent } = await signInReading('zh-CN', { role: 'viewer' })
    await agent.submit('/account/locale', { locale: 'zh-CN' }, '/account')

    const page = await agent.get('/audit')
    assertChinese(assert, page, [
      '操作人',
      '全部操作',
      '结束日期（含当天）',
      '登录成功',
      '控制台',
      '刚刚',
    ])
    assert.include(page.text, '<title>审计日志 · 网关控制台</title>')
    const text = pageText(page.text)
    assert.include(text, 'auth.login')
    assert.include(text, `管理员 ${viewer.email}（#${viewer.user.id}）`)
    assert.match(text, /本页 \d+ 条记录，最新的在前/)
    assert.match(page.text, /<option value="auth\.\*"\s*>登录：全部<\/option>/)

    const none = pageText((await agent.get('/audit?action=wallet.*')).text)
    assert.include(none, '没有符合筛选条件的记录')
    assert.include(none, '清除筛选条件')
  })

  test('an empty log in Chinese keeps the command as it is', async ({ assert }) => {
    const agent = await AdminAgent.signIn(await createAdminUser())
    await emptyAuditLog()
    const page = await agent.get('/audit', { 'accept-language': 'zh-CN' })
    assert.include(pageText(page.text), '审计日志为空')
    assert.include(page.text, '在本控制台或用 <code>node ace</code> 做出的每一项更改')
  })
})
