import { test } from '@japa/runner'
import User from '#models/user'
import { resetDatabase } from '#tests/helpers/database'
import { AdminAgent, createAdminUser, pageText } from '#tests/helpers/admin'

test.group('Console language', (group) => {
  group.each.setup(async () => {
    await resetDatabase()
  })

  test('the browser’s Accept-Language chooses Chinese or English, any Chinese reading Simplified', async ({
    assert,
  }) => {
    const user = await createAdminUser({ role: 'admin' })
    const agent = await AdminAgent.signIn(user)
    const english = await agent.get('/account', { 'accept-language': 'en-GB,en;q=0.9' })
    assert.include(english.text, '<html lang="en">')
    assert.include(pageText(english.text), 'Orders')
    for (const header of ['zh-CN,zh;q=0.9', 'zh', 'zh-TW', 'zh-Hant-HK,en;q=0.5']) {
      const chinese = await agent.get('/account', { 'accept-language': header })
      assert.include(chinese.text, '<html lang="zh-CN">', header)
      assert.include(pageText(chinese.text), '订单', header)
      assert.include(pageText(chinese.text), '退出登录', header)
      assert.notInclude(chinese.text, 'translation missing', header)
    }
    const other = await agent.get('/account', { 'accept-language': 'fr-FR,de;q=0.8' })
    assert.include(other.text, '<html lang="en">', 'a language the console lacks reads English')
  })

  test('an admin’s choice on the account page wins over the browser, and can be given back', async ({
    assert,
  }) => {
    const account = await createAdminUser({ role: 'viewer' })
    const agent = await AdminAgent.signIn(account)
    const user = account.user
    agent.headers['accept-language'] = 'en-US'

    const saved = await agent.submit('/account/locale', { locale: 'zh-CN' }, '/account')
    assert.equal(saved.status, 302, 'a viewer may choose the language of their own console')
    await user.refresh()
    assert.equal(user.locale, 'zh-CN')
    const page = await agent.get('/account')
    assert.include(page.text, '<html lang="zh-CN">')
    assert.include(pageText(page.text), '控制台已切换为简体中文。')
    assert.include(pageText(page.text), '订单')

    const back = await agent.submit('/account/locale', { locale: 'browser' }, '/account')
    assert.equal(back.status, 302)
    await user.refresh()
    assert.isNull(user.locale)
    const english = await agent.get('/account')
    assert.include(english.text, '<html lang="en">')
    assert.include(pageText(english.text), 'The console now speaks English to you.')
  })

  test('a language the console does not speak is refused, nothing saved', async ({ assert }) => {
    const account = await createAdminUser({ role: 'admin' })
    const agent = await AdminAgent.signIn(account)
    const user = account.user
    for (const locale of ['fr', 'zh-TW', '', '<script>']) {
      const refused = await agent.submit('/account/locale', { locale }, '/account')
      assert.equal(refused.status, 302, locale)
      assert.include(
        pageText((await agent.get('/account')).text),
        'Nothing changed: choose one of the languages listed.',
        locale
      )
    }
    const fresh = await User.findOrFail(user.id)
    assert.isNull(fresh.locale)
  })
})
