import { test } from '@japa/runner'
import { resetDatabase } from '#tests/helpers/database'
import { ADMIN_PASSWORD, currentTotp, pageText } from '#tests/helpers/admin'
import { assertChinese, signInReading } from '#tests/helpers/admin_language'

test.group('Console account page in Chinese', (group) => {
  group.each.setup(() => resetDatabase())

  test('the account, set-up and recovery-code pages speak Chinese; the flashes too', async ({
    assert,
  }) => {
    const { admin, agent } = await signInReading()

    const page = await agent.get('/account')
    assertChinese(assert, page, [
      `${admin.email} · 角色：管理员`,
      '修改密码',
      '任何知道你密码的人都能登录。',
    ])
    assert.include(page.text, '<title>我的账户 · 网关控制台</title>')

    await agent.submit('/account/2fa/start', { password: ADMIN_PASSWORD }, '/account')
    const enrol = await agent.get('/account/2fa')
    assertChinese(assert, enrol, ['1. 扫描二维码'])
    assert.include(enrol.text, '<svg role="img" aria-label="用身份验证器应用扫描的二维码"')
    const key = /id="totp-secret">([A-Z2-7 ]+)</.exec(enrol.text)![1].replace(/ /g, '')
    const codes = await agent.post('/account/2fa/confirm', { code: currentTotp(key) })
    assertChinese(assert, codes, ['你的 10 个恢复码', '我已保存'])

    const on = pageText((await agent.get('/account')).text)
    assert.include(on, '还剩 10 个恢复码。')
    assert.include(on, '关闭两步验证')

    await agent.submit('/account/2fa/disable', { password: ADMIN_PASSWORD }, '/account')
    assert.include(pageText((await agent.get('/account')).text), '你的账户已关闭两步验证。')

    await agent.submit(
      '/account/password',
      {
        current_password: ADMIN_PASSWORD,
        new_password: 'another horse battery staple',
        new_password_confirmation: 'another horse battery staple',
      },
      '/account'
    )
    assert.include(pageText((await agent.get('/account')).text), '密码已修改')
  })

  test('English stays as it was, the plural included', async ({ assert }) => {
    const { admin, agent } = await signInReading('en', { totp: true })
    const text = pageText((await agent.get('/account')).text)
    assert.include(text, `${admin.email} · role: admin`)
    assert.include(text, '10 recovery codes left.')
  })
})
