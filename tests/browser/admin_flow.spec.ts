import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import { createAdminUser, currentTotp } from '#tests/helpers/admin'
import { newOrder, prepareLifecycle } from '#tests/helpers/orders'
import { fakeTransfer } from '#tests/helpers/fake_chain'
import { adminUrl } from '#admin/admin_paths'
import settings from '#settings/settings_service'
import {
  DESKTOP,
  PHONE,
  checkAdminPage,
  closeBrowser,
  adminSignIn,
  newPage,
  screenshot,
  seriousAxeViolations,
} from '#tests/helpers/browser'

const EVM_LOWER = '0x52908400098527886e0f7030069857d2e4169ee7'
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'

/** The console's main pages, for the accessibility run and the screenshots. */
const MAIN_PAGES = [
  ['/', 'dashboard'],
  ['/orders', 'orders'],
  ['/callbacks', 'callbacks'],
  ['/unmatched', 'unmatched'],
  ['/api-keys', 'api-keys'],
  ['/wallets', 'wallets'],
  ['/chains', 'chains'],
  ['/settings', 'settings'],
  ['/settings/site', 'settings-site'],
  ['/users', 'users'],
  ['/audit', 'audit'],
  ['/account', 'account'],
] as const

test.group("Console in Chromium: an admin's day", (group) => {
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('sign in with 2FA, create a key, add a wallet, change a setting, find an order, mark it paid, see the audit rows', async ({
    client,
    assert,
  }) => {
    const admin = await createAdminUser({ email: 'owner@example.com', totp: true })
    const order = await newOrder(client)
    fakeTransfer(
      '0xflow0000000000000000000000000000000000000000000000000000000001',
      order.actualAmount
    )
    const { context, page } = await newPage(DESKTOP)
    try {
      await adminSignIn(page, admin, () => currentTotp(admin.totpSecret!))
      assert.equal(new URL(page.url()).pathname, adminUrl('/'))
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Dashboard')

      // A key: its secret is on this page only.
      await page.getByRole('link', { name: 'API keys' }).click()
      await page.goto(adminUrl('/api-keys/new'))
      await page.getByLabel('Note').fill('Flow shop')
      await page.getByRole('button', { name: 'Create key' }).click()
      const secret = (await page.locator('#key-secret').innerText()).trim()
      assert.isAtLeast(secret.length, 32)
      const pid = (await page.locator('#key-pid').innerText()).trim()
      await page.goto(adminUrl(`/api-keys/${pid}`))
      assert.notInclude(await page.content(), secret)

      // A wallet, shown in its canonical form.
      await page.getByRole('link', { name: 'Wallets' }).click()
      await page.locator('#new-wallet-network').selectOption('ethereum')
      await page.locator('#new-wallet-address').fill(EVM_LOWER)
      await page.getByRole('button', { name: 'Add wallet' }).last().click()
      await page.waitForURL((url) => url.search === '?network=ethereum')
      assert.include(await page.getByRole('region', { name: 'Wallets' }).innerText(), EVM_CANONICAL)

      // A setting.
      await page.getByRole('link', { name: 'Settings' }).click()
      await page.goto(adminUrl('/settings/site'))
      await page.getByLabel('Cashier name').fill('Flow Store')
      await page.getByRole('button', { name: 'Save site and branding' }).click()
      await page.waitForURL((url) => url.pathname.endsWith('/settings/site'))
      assert.equal(await page.getByLabel('Cashier name').inputValue(), 'Flow Store')
      const stored = await db.from('settings').where('key', 'site.cashier_name').first()
      // Stored as the text itself (settings_service: a string setting serializes to its value).
      assert.equal(stored.value, 'Flow Store')

      // An order, found and paid with its transaction (verified through the chain's plugin).
      await page.getByRole('link', { name: 'Orders' }).click()
      await page.getByLabel('Search').fill(order.tradeId)
      await page.getByRole('button', { name: 'Apply' }).click()
      await page.getByRole('link', { name: order.tradeId }).click()
      await page
        .getByLabel('Transaction reference')
        .fill('0xflow0000000000000000000000000000000000000000000000000000000001')
      await page.getByRole('button', { name: 'Verify and mark paid' }).click()
      await page.waitForURL((url) => url.pathname.endsWith(`/orders/${order.tradeId}`))
      assert.include(
        await page.getByRole('status').first().innerText(),
        `Order ${order.tradeId} is paid`
      )
      assert.equal((await db.from('orders').where('trade_id', order.tradeId).first()).status, 2)

      // The audit log tells who did all of it.
      await page.getByRole('link', { name: 'Audit log' }).click()
      const log = await page.locator('main').innerText()
      for (const words of [
        'owner@example.com',
        'order.mark_paid',
        'api_key.create',
        'wallet.add',
        'setting',
        'auth.login',
      ]) {
        assert.include(log, words)
      }
    } finally {
      await context.close()
    }
  })

  test('an admin without 2FA, while admins must use it: held at the account page, sets it up there, then reaches the console', async ({
    assert,
  }) => {
    const admin = await createAdminUser({ email: 'new.admin@example.com' })
    await settings.set('console.require_2fa_admins', 'true')
    const { context, page } = await newPage(DESKTOP)
    try {
      await adminSignIn(page, admin)
      assert.equal(new URL(page.url()).pathname, adminUrl('/account'))
      await page.getByRole('link', { name: 'Orders' }).first().click()
      await page.waitForURL((url) => url.pathname === adminUrl('/account'))
      assert.isTrue(
        await page
          .getByRole('heading', { name: 'Set up two-factor sign-in to use the console' })
          .isVisible()
      )
      await checkAdminPage(page, assert, 'account-2fa-required')

      await page.getByLabel('Your password').fill(admin.password)
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click()
      await page.waitForURL((url) => url.pathname === adminUrl('/account/2fa'))
      const key = (await page.locator('#totp-secret').innerText()).replace(/\s/g, '')
      await page.getByLabel('6-digit code').fill(currentTotp(key))
      await page.getByRole('button', { name: 'Turn on two-factor sign-in' }).click()
      await page.locator('#recovery-codes').waitFor()
      await page.goto(adminUrl('/orders'))
      assert.equal(new URL(page.url()).pathname, adminUrl('/orders'))
    } finally {
      await context.close()
    }
  })

  test('the main pages: no serious accessibility violation, no sideways scroll, light and dark; screenshots', async ({
    client,
    assert,
  }) => {
    const admin = await createAdminUser()
    await newOrder(client)
    for (const [viewport, suffix, scheme] of [
      [DESKTOP, 'desktop', 'light'],
      [PHONE, 'phone', 'dark'],
    ] as const) {
      const { context, page } = await newPage(viewport, { colorScheme: scheme })
      try {
        await adminSignIn(page, admin)
        for (const [path, name] of MAIN_PAGES) {
          const response = await page.goto(adminUrl(path))
          assert.equal(response?.status(), 200, path)
          await checkAdminPage(page, assert, `main-${name}`, [[suffix, viewport]])
        }
      } finally {
        await context.close()
      }
    }
    // The sign-in page itself.
    const { context, page } = await newPage(PHONE)
    try {
      await page.goto(adminUrl('/login'))
      assert.deepEqual(await seriousAxeViolations(page), [])
      await screenshot(page, 'console-main-login-phone')
    } finally {
      await context.close()
    }
  })
})
