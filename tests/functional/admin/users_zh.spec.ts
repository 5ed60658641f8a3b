import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { createAdminUser, pageText } from '#tests/helpers/admin'
import { assertChinese, signInReading } from '#tests/helpers/admin_language'

test.group('Console users page in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('the list, the new user’s page and the flashes speak Chinese; roles in words, values kept', async ({
    assert,
  }) => {
    const { agent } = await signInReading('zh-CN')
    const other = await createAdminUser({ role: 'viewer' })

    const page = await agent.get('/users')
    assertChinese(assert, page, [
      '上次登录',
      '设置角色',
      '添加管理员',
      '只读（仅查看）',
      '（你）',
      '从未登录',
    ])
    assert.include(page.text, '<title>用户 · 网关控制台</title>')
    assert.include(page.text, '<option value="viewer" selected>只读</option>')
    assert.include(page.text, `aria-label="停用 ${other.email}"`)

    await agent.submit(`/users/${other.user.id}/role`, { role: 'admin' }, '/users')
    assert.include(
      pageText((await agent.get('/users')).text),
      `${other.email} 现在的角色是管理员。`
    )
    await agent.submit(`/users/${other.user.id}/disable`, {}, '/users')
    assert.include(pageText((await agent.get('/users')).text), `${other.email} 已停用`)

    const created = await agent.submit(
      '/users',
      { email: 'new@example.com', role: 'viewer' },
      '/users'
    )
    assertChinese(assert, created, ['用户已添加', 'new@example.com · 角色：只读', '初始密码'])

    const missing = await agent.submit('/users/999999/enable', {}, '/users')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有此 ID 的管理员。')
  })
})
