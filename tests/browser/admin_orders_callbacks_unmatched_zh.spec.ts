import { test } from '@japa/runner'
import { mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import db from '@adonisjs/lucid/services/db'
import Callback from '#models/callback'
import callbackDeliverer from '#callbacks/callback_deliverer'
import { insertOrdersOfEveryStatus } from '#tests/helpers/order_rows'
import { newOrder } from '#tests/helpers/orders'
import { DOWN_ONCE, merchantForGroup, paidOrder } from '#tests/helpers/merchant_group'
import { createAdminUser } from '#tests/helpers/admin'
import { adminUrl } from '#admin/admin_paths'
import { latePayment, reorgedPayment } from '#tests/helpers/unmatched_payments'
import {
  DESKTOP,
  NARROW_PHONE,
  closeBrowser,
  adminPage,
  horizontalOverflow,
  seriousAxeViolations,
} from '#tests/helpers/browser'

/** Screenshots of the Chinese pages go outside the repository (ADMIN_ZH_SHOTS, else the system's temp dir). */
const SHOTS = process.env.ADMIN_ZH_SHOTS ?? join(tmpdir(), 'console-zh-screenshots')

test.group('Console in Chinese in a browser: orders, callbacks, unmatched payments', (group) => {
  const merchant = merchantForGroup(group, { replies: DOWN_ONCE })
  group.teardown(() => closeBrowser())
  group.each.timeout(180_000)

  test('every page of the three areas, in Chinese at 1280 and 320 px: no sideways scroll, no serious axe violation, no English label left', async ({
    client,
    assert,
  }) => {
    const admin = await createAdminUser()
    await insertOrdersOfEveryStatus(60)
    const paid = await paidOrder(client, merchant, { name: 'T 恤，蓝色' })
    await callbackDeliverer.runOnce()
    await db.from('callbacks').where('order_id', paid.id).update({ next_attempt_at: 0 })
    await callbackDeliverer.runOnce()
    const waiting = await newOrder(client)

    const { payment } = await latePayment(client, '0xzhbrowser0001')
    const { order: moved, row: notice } = await reorgedPayment(client, '0xzhbrowser0002')
    const callback = await Callback.findByOrFail('order_id', paid.id)

    // The admin's own choice: the sign-in page stays in the browser's English.
    admin.user.locale = 'zh-CN'
    await admin.user.save()
    mkdirSync(SHOTS, { recursive: true })
    const pages = [
      ['/orders', 'orders'],
      ['/orders?q=no-such-order', 'orders-empty'],
      [`/orders/${paid.tradeId}`, 'order-paid'],
      [`/orders/${waiting.tradeId}`, 'order-waiting'],
      [`/orders/${moved.tradeId}`, 'order-reorged'],
      ['/callbacks', 'callbacks'],
      [`/callbacks/${callback.id}`, 'callback'],
      ['/unmatched', 'unmatched'],
      [`/unmatched/${payment.id}`, 'unmatched-transfer'],
      [`/unmatched/${notice.id}`, 'unmatched-reorged'],
    ] as const
    for (const [viewport, size] of [
      [DESKTOP, '1280'],
      [NARROW_PHONE, '320'],
    ] as const) {
      const { context, page } = await adminPage(viewport, admin)
      try {
        for (const [path, name] of pages) {
          await page.goto(adminUrl(path))
          assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN', path)
          const text = await page.innerText('main')
          assert.notInclude(text, 'translation missing', path)
          // Open the confirmations too, so their questions are seen and checked.
          for (const summary of await page.locator('details.confirm > summary').all())
            await summary.click()
          await page.screenshot({
            path: join(SHOTS, `console-zh-${name}-${size}.png`),
            fullPage: true,
          })
          const overflow = await horizontalOverflow(page)
          if (overflow > 0) {
            const wide = await page.evaluate(
              `[...document.querySelectorAll('body *')].filter((e) => e.getBoundingClientRect().right > document.documentElement.clientWidth + 0.5).slice(-6).map((e) => e.tagName + '.' + e.className + ': ' + (e.textContent || '').trim().slice(0, 60))`
            )
            assert.fail(
              `${path} scrolls sideways at ${size} by ${overflow}px: ${JSON.stringify(wide)}`
            )
          }
          const violations = await seriousAxeViolations(page)
          assert.deepEqual(violations, [], `${path} (${size}): ${JSON.stringify(violations)}`)
        }
      } finally {
        await context.close()
      }
    }
  })
})
