import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, pageText } from '#tests/helpers/admin'
import { signInReading } from '#tests/helpers/admin_language'

test.group('Console error pages in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('a missing page, a refused write and an expired form speak the admin’s language', async ({
    assert,
  }) => {
    const visitor = new AdminAgent()
    const missing = await visitor.get('/no-such-page', { 'accept-language': 'zh-CN' })
    assert.equal(missing.status, 404)
    assert.include(missing.text, '<html lang="zh-CN">')
    const text = pageText(missing.text)
    assert.include(text, '错误 404')
    assert.include(text, '页面不存在')
    assert.include(text, '此地址没有控制台页面。')
    assert.include(text, '返回')
    assert.notInclude(missing.text, 'translation missing')

    // The admin's own choice wins over the browser's on an error page too.
    const { agent } = await signInReading('en-US')
    await agent.submit('/account/locale', { locale: 'zh-CN' }, '/account')
    const gone = await agent.get('/callbacks/999999')
    assert.equal(gone.status, 404)
    assert.include(gone.text, '<html lang="zh-CN">')
    assert.include(pageText(gone.text), '错误 404 未找到')

    // An expired form is refused before the session's admin is read: the browser's language.
    const expired = await agent.post(
      '/users',
      { email: 'x@example.com', role: 'viewer' },
      { csrf: 'not-the-token' }
    )
    assert.equal(expired.status, 403)
    assert.include(expired.text, '<html lang="en">')
    agent.headers['accept-language'] = 'zh-CN'
    const expiredZh = await agent.post(
      '/users',
      { email: 'x@example.com', role: 'viewer' },
      { csrf: 'not-the-token' }
    )
    assert.include(expiredZh.text, '<html lang="zh-CN">')
    assert.include(pageText(expiredZh.text), '表单已过期')

    const invalid = await agent.submit(
      '/users',
      { email: 'x@example.com', role: 'owner' },
      '/users'
    )
    assert.equal(invalid.status, 302)
    assert.include(pageText((await agent.get('/users')).text), '部分字段需要修改：请查看下方提示。')
  })

  test('English stays as it was', async ({ assert }) => {
    const missing = await new AdminAgent().get('/no-such-page', { 'accept-language': 'en' })
    assert.include(
      pageText(missing.text),
      'Error 404 Page not found There is no console page at this address. Go back Sign in'
    )
  })
})
