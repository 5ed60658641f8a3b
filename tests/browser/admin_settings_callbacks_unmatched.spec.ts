import { test } from '@japa/runner'
import Order from '#models/order'
import Callback from '#models/callback'
import settings from '#settings/settings_service'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { newOrder } from '#tests/helpers/orders'
import { merchantForGroup } from '#tests/helpers/merchant_group'
import { createAdminUser } from '#tests/helpers/admin'
import { adminUrl } from '#admin/admin_paths'
import { latePayment } from '#tests/helpers/unmatched_payments'
import {
  DESKTOP,
  PHONE,
  checkAdminPage,
  closeBrowser,
  adminSignIn,
  newPage,
  screenshot,
} from '#tests/helpers/browser'

test.group('Console in a browser: settings, callbacks, unmatched payments', (group) => {
  const merchant = merchantForGroup(group)
  group.teardown(() => closeBrowser())

  test("branding: the preview follows what is typed; saving makes it the cashier's", async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    for (const scheme of ['light', 'dark'] as const) {
      const { context, page } = await newPage(DESKTOP, { colorScheme: scheme })
      const errors: string[] = []
      page.on('console', (message) => {
        if (message.type() === 'error') errors.push(message.text())
      })
      await adminSignIn(page, admin)
      await page.goto(adminUrl('/settings/site'))
      const previewPage = page.locator('.bp-page')
      const background = () =>
        previewPage.evaluate(
          (element) => (globalThis as any).getComputedStyle(element).backgroundColor as string
        )
      // The cashier's own (light) background, used while no valid colour is typed.
      const defaultBackground = 'rgb(238, 241, 246)'
      // The second pass starts from what the first one saved.
      assert.equal(await background(), scheme === 'light' ? defaultBackground : 'rgb(0, 170, 119)')
      const chosen =
        scheme === 'light' ? ['#00aa77', 'rgb(0, 170, 119)'] : ['#ffe4f1', 'rgb(255, 228, 241)']

      await page.getByLabel('Cashier name').fill('Acme Pay')
      await page.getByLabel('Background colour').fill('#ff0000')
      assert.equal(await page.locator('[data-preview="name"]').textContent(), 'Acme Pay')
      assert.equal(await background(), 'rgb(255, 0, 0)')
      // A value the cashier would refuse is not previewed: back to the default.
      await page.getByLabel('Background colour').fill('red;}')
      assert.equal(await background(), defaultBackground)
      await page.getByLabel('Logo URL').fill('https://cdn.example/logo.png')
      assert.isTrue(await page.locator('[data-preview="logo"]').isVisible())
      await page.getByLabel('Logo URL').fill('javascript:alert(1)')
      assert.isFalse(await page.locator('[data-preview="logo"]').isVisible())
      await page.getByLabel('Logo URL').fill('')

      await page.getByLabel('Background colour').fill(chosen[0])
      await page.getByRole('button', { name: 'Save site and branding' }).click()
      assert.include(await page.locator('.flash').first().textContent(), 'Saved Site and branding')
      assert.equal(await background(), chosen[1])
      assert.equal(await settings.get('site.background_color'), chosen[0])
      await checkAdminPage(page, assert, `settings-site-${scheme}`)
      assert.deepEqual(errors, [], `no CSP violation nor script error: ${errors.join(' | ')}`)
      await context.close()
    }
  }).timeout(120_000)

  test('settings pages, the callbacks list and detail, unmatched list and detail render on every width', async ({
    client,
    assert,
  }) => {
    const admin = await createAdminUser()
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    await paymentService.markPaid(order.id, { reference: `tx-${order.tradeId}`, source: 'scanner' })
    merchant.reset([
      { status: 500, body: 'Internal error while saving the order, please retry later' },
    ])
    await callbackDeliverer.runOnce()
    const callback = await Callback.findByOrFail('order_id', order.id)

    const { order: expired, payment } = await latePayment(client, '0xbrowserlate000001')

    const { context, page } = await newPage(DESKTOP)
    await adminSignIn(page, admin)
    for (const settingsGroup of ['orders', 'rates', 'provider']) {
      await page.goto(adminUrl(`/settings/${settingsGroup}`))
      await checkAdminPage(page, assert, `settings-${settingsGroup}`)
    }
    await page.goto(adminUrl('/callbacks'))
    await checkAdminPage(page, assert, 'callbacks')
    await page.goto(adminUrl(`/callbacks/${callback.id}`))
    await checkAdminPage(page, assert, 'callback-detail')
    await page.goto(adminUrl('/unmatched'))
    await checkAdminPage(page, assert, 'unmatched')
    await page.goto(adminUrl(`/unmatched/${payment.id}`))
    await checkAdminPage(page, assert, 'unmatched-detail')

    // The dismiss confirmation opens without leaving the page.
    await page.setViewportSize(PHONE)
    await page.getByText('Dismiss this payment', { exact: true }).click()
    assert.isTrue(await page.getByLabel('Note').isVisible())
    await screenshot(page, 'console-unmatched-dismiss-phone')

    // Assign from the page: the late order is paid.
    await page.getByLabel('trade_id of the order').fill(expired.tradeId)
    await page.getByRole('button', { name: 'Pay this order' }).click()
    assert.include(
      await page.locator('.flash').first().textContent(),
      `Order ${expired.tradeId} is paid`
    )
    assert.equal((await Order.findOrFail(expired.id)).status, 2)
    await context.close()
  }).timeout(180_000)
})
