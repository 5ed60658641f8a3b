import { test } from '@japa/runner'
import paymentService from '#services/payment_service'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { createAdminUser } from '#tests/helpers/admin'
import { insertOrders, insertOrdersOfEveryStatus } from '#tests/helpers/order_rows'
import { newOrder } from '#tests/helpers/orders'
import { fakeTransfer } from '#tests/helpers/fake_chain'
import { DOWN_ONCE, merchantForGroup } from '#tests/helpers/merchant_group'
import { adminUrl } from '#admin/admin_paths'
import {
  DESKTOP,
  PHONE,
  closeBrowser,
  adminPage,
  horizontalOverflow,
  screenshot,
  seriousAxeViolations,
} from '#tests/helpers/browser'

test.group('Console orders in Chromium', (group) => {
  const merchant = merchantForGroup(group, { replies: DOWN_ONCE })
  group.teardown(() => closeBrowser())
  group.each.timeout(120_000)

  test('find an order by its trade ID, mark it paid, see the audit row on its page', async ({
    client,
    assert,
  }) => {
    const user = await createAdminUser({ email: 'ops@example.com' })
    await insertOrders(30)
    const order = await newOrder(client, { notify_url: merchant.notifyUrl })
    fakeTransfer('0xbrowser000001', order.actualAmount)
    const { context, page } = await adminPage(DESKTOP, user)
    try {
      await page.goto(adminUrl('/orders'))
      await page.getByLabel('Search').fill(order.tradeId)
      await page.getByRole('button', { name: 'Apply' }).click()
      await page.waitForURL((url) => url.searchParams.get('q') === order.tradeId)
      const rows = page
        .getByRole('region', { name: 'Orders matching the filters' })
        .locator('tbody tr')
      assert.equal(await rows.count(), 1)
      await page.getByRole('link', { name: order.tradeId }).click()
      await page.waitForURL((url) => url.pathname.endsWith(`/orders/${order.tradeId}`))

      await page.getByLabel('Transaction reference').fill('0xbrowser000001')
      await page.getByRole('button', { name: 'Verify and mark paid' }).click()
      await page.waitForURL((url) => url.pathname.endsWith(`/orders/${order.tradeId}`))
      assert.include(
        await page.getByRole('status').first().innerText(),
        `Order ${order.tradeId} is paid by 0xbrowser000001`
      )
      const history = page.getByRole('region', { name: 'History' })
      assert.include(await history.innerText(), 'ops@example.com · order.mark_paid')
      assert.include(await page.locator('.page-actions').innerText(), 'paid')
    } finally {
      await context.close()
    }
  })

  test('the list and an order page: no serious accessibility violation, no sideways scroll on a phone; screenshots', async ({
    client,
    assert,
  }) => {
    const user = await createAdminUser()
    await insertOrdersOfEveryStatus(60)
    const order = await newOrder(client, { notify_url: merchant.notifyUrl, name: 'T-shirt, blue' })
    await paymentService.markPaid(order.id, {
      reference: '0xscreenshot0000000000000000000000000000000000000000000000000001',
      source: 'scanner',
    })
    await callbackDeliverer.runOnce()
    const waiting = await newOrder(client)
    for (const [viewport, suffix] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      const { context, page } = await adminPage(viewport, user)
      try {
        for (const [path, name] of [
          ['/orders', 'orders'],
          ['/orders?q=no-such-order', 'orders-empty'],
          [`/orders/${order.tradeId}`, 'order-paid'],
          [`/orders/${waiting.tradeId}`, 'order-waiting'],
        ] as const) {
          await page.goto(adminUrl(path))
          const violations = await seriousAxeViolations(page)
          assert.deepEqual(violations, [], `${path} (${suffix}): ${JSON.stringify(violations)}`)
          assert.isAtMost(
            await horizontalOverflow(page),
            0,
            `${path} scrolls sideways at ${viewport.width} px`
          )
          await screenshot(page, `console-${name}-${suffix}`)
        }
      } finally {
        await context.close()
      }
    }
  })
})
