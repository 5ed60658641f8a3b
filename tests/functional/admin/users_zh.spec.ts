import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

test.group('Console users page in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('the list, the new user’s page and the flashes speak Chinese; roles in words, values kept', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ role: 'admin' })
    const other = await createAdminUser({ role: 'viewer' })
    const agent = await AdminAgent.signIn(admin)
    agent.headers['accept-language'] = 'zh-CN'

    const page = await agent.get('/users')
    assert.equal(page.status, 200)
    assert.include(page.text, '<html lang="zh-CN">')
    assert.include(page.text, '<title>用户 · 网关控制台</title>')
    const text = pageText(page.text)
    for (const words of [
      '上次登录',
      '设置角色',
      '添加管理员',
      '只读（仅查看）',
      '（你）',
      '从未登录',
    ])
      assert.include(text, words)
    assert.include(page.text, '<option value="viewer" selected>只读</option>')
    assert.include(page.text, `aria-label="停用 ${other.email}"`)
    assert.notInclude(page.text, 'translation missing')

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
    assert.equal(created.status, 200)
    assert.include(pageText(created.text), '用户已添加')
    assert.include(pageText(created.text), 'new@example.com · 角色：只读')
    assert.include(pageText(created.text), '初始密码')
    assert.notInclude(created.text, 'translation missing')

    const missing = await agent.submit('/users/999999/enable', {}, '/users')
    assert.equal(missing.status, 404)
    assert.include(pageText(missing.text), '没有此 ID 的管理员。')
  })
})
