import { test } from '@japa/runner'
import { ADMIN_PASSWORD, createAdminUser, currentTotp } from '#tests/helpers/admin'
import { adminUrl } from '#admin/admin_paths'
import {
  DESKTOP,
  NARROW_PHONE,
  checkAdminPage,
  browserGroup,
  newPage,
} from '#tests/helpers/browser'
import { fillDashboard, forgetDashboard } from '#tests/helpers/chain_rows'

const SIZES = [
  ['1280', DESKTOP],
  ['320', NARROW_PHONE],
] as const

/** No English word of the console's own left on the page (values such as e-mails aside). */
async function englishLeft(page: import('playwright-core').Page, words: string[]) {
  const text = await page.locator('body').innerText()
  return words.filter((word) => text.includes(word))
}

test.group(
  'Console in Chinese in Chromium: sign-in, account, users, audit, dashboard, errors',
  (group) => {
    browserGroup(group, forgetDashboard)
    group.each.timeout(120_000)

    test('every page of these areas in Chinese: no sideways scroll, no serious axe violation; screenshots at 1280 and 320 px', async ({
      assert,
    }) => {
      await fillDashboard(Date.now(), (day) => (day % 4) + 1)
      const admin = await createAdminUser({ totp: true })
      await createAdminUser({ role: 'viewer', email: 'viewer.with.a.long.address@example.com' })
      const { context, page } = await newPage(DESKTOP, { locale: 'zh-CN' })
      try {
        await page.goto(adminUrl('/login'))
        await page.getByRole('heading', { name: '登录' }).waitFor()
        assert.equal(await page.locator('html').getAttribute('lang'), 'zh-CN')
        await checkAdminPage(page, assert, 'zh-login', SIZES)
        await page.setViewportSize(DESKTOP)
        await page.getByLabel('邮箱').fill(admin.email)
        await page.getByLabel('密码').fill(admin.password)
        await page.getByRole('button', { name: '登录' }).click()
        await page.getByRole('heading', { name: '输入验证码' }).waitFor()
        await checkAdminPage(page, assert, 'zh-second-factor', SIZES)
        await page.setViewportSize(DESKTOP)
        await page.getByLabel('验证码').fill(currentTotp(admin.totpSecret!))
        await page.getByRole('button', { name: '验证并登录' }).click()

        await page.getByRole('heading', { name: '仪表盘', level: 1 }).waitFor()
        await page.getByText('显示数据').click()
        await checkAdminPage(page, assert, 'zh-dashboard', SIZES)
        assert.deepEqual(
          await englishLeft(page, [
            'Orders',
            'Health checks',
            'Problem',
            'Warning',
            'Today',
            'Chain scanners',
            'Callback',
            'blocks',
            ' ago',
          ]),
          []
        )

        await page.goto(adminUrl('/users'))
        await page.getByRole('heading', { name: '用户', level: 1 }).waitFor()
        await checkAdminPage(page, assert, 'zh-users', SIZES)
        await page.setViewportSize(DESKTOP)
        await page.getByLabel('邮箱').fill('new.operator@example.com')
        await page.getByRole('button', { name: '添加用户' }).click()
        await page.getByRole('heading', { name: '用户已添加' }).waitFor()
        await checkAdminPage(page, assert, 'zh-user-created', SIZES)

        await page.goto(adminUrl('/audit'))
        await page.getByRole('heading', { name: '审计日志', level: 1 }).waitFor()
        await checkAdminPage(page, assert, 'zh-audit', SIZES)
        assert.deepEqual(
          await englishLeft(page, ['Signed in', 'Admin user', 'console', 'Who', 'entries']),
          []
        )

        await page.goto(adminUrl('/account'))
        await page.getByRole('heading', { name: '我的账户', level: 1 }).waitFor()
        await checkAdminPage(page, assert, 'zh-account', SIZES)

        await page.goto(adminUrl('/no-such-page'))
        await page.getByRole('heading', { name: '页面不存在' }).waitFor()
        await checkAdminPage(page, assert, 'zh-error-404', SIZES)
      } finally {
        await context.close()
      }
    })

    test('two-factor set-up and the recovery codes in Chinese', async ({ assert }) => {
      const admin = await createAdminUser()
      const { context, page } = await newPage(DESKTOP, { locale: 'zh-CN' })
      try {
        await page.goto(adminUrl('/login'))
        await page.getByLabel('邮箱').fill(admin.email)
        await page.getByLabel('密码').fill(admin.password)
        await page.getByRole('button', { name: '登录' }).click()
        await page.getByRole('heading', { name: '仪表盘', level: 1 }).waitFor()
        await page.goto(adminUrl('/account'))
        await page.locator('#start-2fa-password').fill(ADMIN_PASSWORD)
        await page.getByRole('button', { name: '设置两步验证' }).click()
        await page.getByRole('heading', { name: '设置两步验证', level: 1 }).waitFor()
        await checkAdminPage(page, assert, 'zh-two-factor-enrol', SIZES)
        await page.setViewportSize(DESKTOP)
        const key = (await page.locator('#totp-secret').innerText()).replace(/\s/g, '')
        await page.getByLabel('6 位验证码').fill(currentTotp(key))
        await page.getByRole('button', { name: '开启两步验证' }).click()
        await page.getByRole('heading', { name: '两步验证已开启' }).waitFor()
        await checkAdminPage(page, assert, 'zh-recovery-codes', SIZES)
        await page.goto(adminUrl('/account'))
        await page.getByText('还剩 10 个恢复码。').waitFor()
        await checkAdminPage(page, assert, 'zh-account-2fa-on', SIZES)
      } finally {
        await context.close()
      }
    })
  }
)
