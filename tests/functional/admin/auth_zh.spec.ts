import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

const ZH = { 'accept-language': 'zh-CN,zh;q=0.9' }

test.group('Console sign-in in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('the sign-in and second-factor pages speak Chinese, commands and e-mails kept as they are', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ totp: true, email: 'ops<b>@example.com' })
    const agent = new AdminAgent()
    agent.headers = { ...ZH }
    const login = await agent.get('/login')
    assert.equal(login.status, 200)
    assert.include(login.text, '<html lang="zh-CN">')
    assert.include(login.text, '<title>登录 · 网关控制台</title>')
    assert.include(pageText(login.text), '仅限本网关的管理员。')
    assert.include(login.text, '<code>node ace admin:password EMAIL</code>')
    assert.notInclude(login.text, 'translation missing')
    assert.notInclude(pageText(login.text), 'Sign in')

    const wrong = await agent.submit('/login', { email: admin.email, password: 'not it at all' })
    assert.equal(wrong.status, 302)
    assert.include(
      pageText((await agent.get('/login')).text),
      '邮箱或密码不正确，或不是管理员账户。'
    )

    const first = await agent.submit('/login', { email: admin.email, password: admin.password })
    assert.equal(first.location?.endsWith('/login/2fa'), true)
    const second = await agent.get('/login/2fa')
    assert.include(second.text, '<html lang="zh-CN">')
    assert.include(pageText(second.text), '输入验证码')
    // The e-mail stays escaped inside the translated sentence.
    assert.include(second.text, '<strong>ops&lt;b&gt;@example.com</strong>')
    assert.include(second.text, '<code>node ace admin:2fa:reset EMAIL</code>')
    assert.notInclude(second.text, 'translation missing')

    const refused = await agent.submit('/login/2fa', { code: '000000' })
    assert.equal(refused.status, 302)
    assert.include(pageText((await agent.get('/login/2fa')).text), '验证码无效。')
  })

  test('signing out says so in the admin’s language', async ({ assert }) => {
    const admin = await createAdminUser({ role: 'viewer' })
    const agent = await AdminAgent.signIn(admin)
    agent.headers = { ...ZH }
    await agent.get('/account')
    const out = await agent.post('/logout')
    assert.equal(out.status, 302)
    const login = await agent.get('/login')
    assert.include(pageText(login.text), '你已退出登录。')
  })
})
