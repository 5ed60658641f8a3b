import { test } from '@japa/runner'
import { PNG } from 'pngjs'
import jsQRModule from 'jsqr'
import type { Page } from 'playwright-core'
import Order from '#models/order'
import paymentService from '#services/payment_service'
import orderExpiry from '#services/order_expiry'
import { resetDatabase } from '#tests/helpers/database'
import { FAKE_WALLET, fakeTransfer } from '#tests/helpers/fake_chain'
import { FakeProvider } from '#tests/helpers/fake_provider'
import { newOrder, newPlaceholder, prepareLifecycle } from '#tests/helpers/orders'
import {
  DESKTOP,
  NARROW_PHONE,
  PHONE,
  closeBrowser,
  horizontalOverflow,
  newPage,
  screenshot,
  seriousAxeViolations,
} from '#tests/helpers/browser'

// jsqr is CommonJS: its default export is the module itself at run time.
const jsQR = ((jsQRModule as any).default ?? jsQRModule) as typeof jsQRModule.default

const visible = (view: string) => `[data-view="${view}"]:not([hidden])`

/**
 * Screenshots of the page's current state at phone, narrow phone and
 * desktop width (under tmp/screenshots/), each checked for horizontal
 * overflow, plus an axe-core run: no serious or critical violation.
 */
async function checkState(page: Page, assert: any, name: string) {
  for (const [size, viewport] of [
    ['phone', PHONE],
    ['320', NARROW_PHONE],
    ['desktop', DESKTOP],
  ] as const) {
    await page.setViewportSize(viewport)
    assert.equal(await horizontalOverflow(page), 0, `${name} overflows at ${size}`)
    await screenshot(page, `cashier-${name}-${size}`)
  }
  await page.setViewportSize(PHONE)
  assert.deepEqual(await seriousAxeViolations(page), [], `axe on ${name}`)
}

/** Decodes the QR code element of the page from a screenshot of it. */
async function decodeQr(page: Page, selector: string): Promise<string | null> {
  const png = PNG.sync.read(await page.locator(selector).screenshot())
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data ?? null
}

/** Minutes and seconds shown by the countdown, as seconds. */
async function countdownSeconds(page: Page): Promise<number> {
  const text = (await page.locator('#countdown').textContent())!.trim()
  const parts = text.split(':').map(Number)
  return parts.reduce((total, part) => total * 60 + part, 0)
}

/** A Date whose "now" is `offsetMs` away from the real clock (a wrong device clock). */
function shiftedClock(offsetMs: number) {
  return `(() => {
    const RealDate = Date
    const offset = ${offsetMs}
    class ShiftedDate extends RealDate {
      constructor(...args) { if (args.length === 0) super(RealDate.now() + offset); else super(...args) }
      static now() { return RealDate.now() + offset }
    }
    globalThis.Date = ShiftedDate
  })()`
}

test.group('Cashier in Chromium', (group) => {
  const provider = new FakeProvider()

  group.setup(async () => {
    await provider.start()
    return async () => {
      await closeBrowser()
      await provider.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    await prepareLifecycle()
  })

  test('placeholder → choose a network with the keyboard → pay view with QR and countdown', async ({
    client,
    assert,
  }) => {
    const order = await newPlaceholder(client, { redirect_url: 'https://shop.example/back' })
    const { context, page } = await newPage()
    const errors: string[] = []
    page.on('pageerror', (error) => errors.push(String(error)))
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector(visible('choose'))
      await checkState(page, assert, 'choose')

      // keyboard only: focus the first choice, select it, submit
      await page.locator('input[name="target"]').first().focus()
      await page.keyboard.press('Space')
      assert.isTrue(await page.locator('input[name="target"]').first().isChecked())
      await page.keyboard.press('Enter')
      await page.waitForSelector(visible('pay'))
      assert.equal(new URL(page.url()).pathname, `/cashier/${order.tradeId}`) // completed in place

      assert.equal(await page.locator('#amount').textContent(), '13.80')
      assert.equal(await page.locator('#address').textContent(), FAKE_WALLET)
      const seconds = await countdownSeconds(page)
      assert.isAtLeast(seconds, 9 * 60)
      assert.isAtMost(seconds, 10 * 60)

      const uri = (await client.get(`/pay/payment-uri/${order.tradeId}`)).body().data.uri
      assert.equal(uri, `fake:${FAKE_WALLET}?amount=13.8`)
      assert.equal(await decodeQr(page, '#qr svg'), uri)
      assert.equal(await page.locator('#open-wallet').getAttribute('href'), uri)
      await page.locator('.alt-qr summary').click()
      assert.equal(await decodeQr(page, '.alt-qr svg'), FAKE_WALLET)
      await page.locator('.alt-qr summary').click()

      await checkState(page, assert, 'pay')
      assert.deepEqual(errors, [])
    } finally {
      await context.close()
    }
  })

  test('dark mode renders the pay view without violations', async ({ client, assert }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage(PHONE, { colorScheme: 'dark' })
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector(visible('pay'))
      await checkState(page, assert, 'pay-dark')
    } finally {
      await context.close()
    }
  })

  test('copy buttons copy the exact amount and address and say so', async ({ client, assert }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      const button = page.locator('#amount-label').locator('xpath=..').locator('[data-copy]')
      await button.click()
      await page.waitForSelector('[data-copy="13.80"][data-state="copied"]')
      assert.equal(await button.locator('[data-copy-text]').textContent(), 'Copied')
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), '13.80')
      await page.locator(`[data-copy="${FAKE_WALLET}"]`).click()
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), FAKE_WALLET)
      await page.waitForSelector('[data-copy="13.80"]:not([data-state])') // the label comes back
    } finally {
      await context.close()
    }
  })

  test('change network on a waiting order: errors are plain sentences in the page language', async ({
    client,
    assert,
  }) => {
    await (await import('#settings/settings_service')).default.set('provider.enabled', 'true')
    const order = await newOrder(client)
    const { context, page } = await newPage(PHONE, { locale: 'es-ES' })
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.locator('[data-show-choose]').click()
      await page.waitForSelector(visible('choose'))
      // the provider is enabled but not configured: 10018
      await page.locator('input[value="provider|USDT"]').check()
      await page.locator('#choose-submit').click()
      await page.waitForSelector('#choose-error:not([hidden])')
      assert.equal(
        await page.locator('#choose-error').textContent(),
        'La página de pago alojada aún no está configurada. Elige otra forma de pago.'
      )
      await checkState(page, assert, 'choose-error')
      await page.locator('[data-hide-choose]').click()
      await page.waitForSelector(visible('pay'))
    } finally {
      await context.close()
    }
  })

  test('provider choice opens the hosted link; the page keeps watching', async ({
    client,
    assert,
  }) => {
    await provider.configure()
    const order = await newPlaceholder(client)
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.locator('input[value="provider|USDT"]').check()
      await page.locator('#choose-submit').click()
      await page.waitForSelector(visible('provider'))
      const link = await page.locator('#open-provider').getAttribute('href')
      assert.match(link!, /^https:\/\/pay\.example\/checkout\/P-\d+$/)
      await checkState(page, assert, 'provider')

      const [popup] = await Promise.all([
        context.waitForEvent('page'),
        page.locator('#open-provider').click(),
      ])
      await popup.waitForLoadState()
      assert.equal(popup.url(), link)

      const fresh = await Order.findByOrFail('trade_id', order.tradeId)
      await paymentService.markPaid(fresh.id, {
        reference: 'P-1',
        source: 'provider',
        paidAt: Date.now(),
      })
      await page.waitForSelector(visible('paid'), { timeout: 15_000 })
    } finally {
      await context.close()
    }
  })

  test('paid while open: success screen, visible 5 s countdown, then the merchant', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { redirect_url: 'https://shop.example/back?order=7' })
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector(visible('pay'))
      fakeTransfer('tx-browser-paid', order.actualAmount)
      await paymentService.markPaid(order.id, {
        reference: 'tx-browser-paid',
        source: 'scanner',
        paidAt: Date.now(),
      })
      await page.waitForSelector(visible('paid'), { timeout: 15_000 })
      assert.match(
        (await page.locator('#redirect-note').textContent())!,
        /Back to the merchant in [1-5] s/
      )
      assert.equal(
        await page.locator('#return-now').getAttribute('href'),
        `/pay/return/${order.tradeId}`
      )
      await checkState(page, assert, 'paid')
      // /pay/return answers 302 to the shop (a redirect the test cannot serve: the request is the proof)
      await page.waitForRequest(
        (request) => request.url() === 'https://shop.example/back?order=7',
        { timeout: 15_000 }
      )
    } finally {
      await context.close()
    }
  })

  test('expired while open: the expired view with the merchant link', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client, { redirect_url: 'https://shop.example/back' })
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector(visible('pay'))
      order.merge({ expirationTime: Date.now() - 1000 })
      await order.save()
      await orderExpiry.expireDue()
      await page.waitForSelector(visible('expired'), { timeout: 15_000 })
      assert.equal(
        await page.locator('#expired-back').getAttribute('href'),
        'https://shop.example/back'
      )
      await checkState(page, assert, 'expired')
    } finally {
      await context.close()
    }
  })

  test('the countdown reaching zero shows expired without waiting for the server', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage()
    try {
      // The page's clock is the test's: it reaches the end of the order's ten minutes when
      // told to, after the pay view was seen, however long the page took to load. The
      // server still has the order waiting (its expiry is ten minutes away there).
      await page.clock.install()
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector(visible('pay'))
      await page.clock.fastForward('11:00')
      await page.waitForSelector(visible('expired'), { timeout: 15_000 })
      assert.equal((await Order.findOrFail(order.id)).status, 1)
    } finally {
      await context.close()
    }
  })

  test('"I have paid": a refusal in words, then an accepted hash', async ({ client, assert }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.locator('[data-open-dialog]').click()
      await page.waitForSelector('#hash-dialog[open]')
      assert.equal(await page.evaluate('document.activeElement.id'), 'hash-input')
      await page.keyboard.type('0xfeedfacefeedface')
      await page.keyboard.press('Enter')
      await page.waitForSelector('#hash-result[data-tone="danger"]')
      assert.equal(
        await page.locator('#hash-result').textContent(),
        'This transaction was not accepted. Transaction check failed: transaction 0xfeedfacefeedface not found'
      )
      await checkState(page, assert, 'hash-refused')

      // Escape closes the dialog; so does Cancel by keyboard
      await page.keyboard.press('Escape')
      await page.waitForSelector('#hash-dialog:not([open])', { state: 'attached' })
      await page.locator('[data-open-dialog]').click()
      await page.locator('#hash-dialog [data-close-dialog]').focus()
      await page.keyboard.press('Enter')
      await page.waitForSelector('#hash-dialog:not([open])', { state: 'attached' })

      fakeTransfer('0xgoodgoodgood', order.actualAmount)
      await page.locator('[data-open-dialog]').click()
      await page.locator('#hash-input').fill('0xgoodgoodgood')
      await page.locator('#hash-submit').click()
      await page.waitForSelector(visible('paid'), { timeout: 10_000 })
      assert.equal((await Order.findOrFail(order.id)).status, 2)
    } finally {
      await context.close()
    }
  })

  test('language switch: the page changes language and remembers it', async ({
    client,
    assert,
  }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      assert.equal(await page.getAttribute('html', 'lang'), 'en')
      await Promise.all([
        page.waitForURL(/lang=ja/),
        page.locator('#lang-select').selectOption('ja'),
      ])
      assert.equal(await page.getAttribute('html', 'lang'), 'ja')
      assert.equal(await page.locator('.timer-label').textContent(), '残り時間')
      assert.equal(await page.locator('#amount').textContent(), '13.80') // digits never localised
      await checkState(page, assert, 'pay-ja')

      await page.goto(`/cashier/${order.tradeId}`) // no ?lang: the cookie decides
      assert.equal(await page.getAttribute('html', 'lang'), 'ja')
    } finally {
      await context.close()
    }
  })

  for (const [label, offset] of [
    ['an hour ahead', 3600_000],
    ['an hour behind', -3600_000],
  ] as const) {
    test(`the countdown is right when the device clock is ${label}`, async ({ client, assert }) => {
      const order = await newOrder(client)
      const { context, page } = await newPage(PHONE, { init: shiftedClock(offset) })
      try {
        await page.goto(`/cashier/${order.tradeId}`)
        // the override is in force in the page
        const skew = await page.evaluate(() => Date.now())
        assert.isAbove(Math.abs(skew - Date.now()), 3000_000)
        await page.waitForTimeout(1200) // a few ticks of the script's own countdown
        const seconds = await countdownSeconds(page)
        assert.isAtLeast(seconds, 9 * 60, `countdown ${seconds}s`)
        assert.isAtMost(seconds, 10 * 60, `countdown ${seconds}s`)
        assert.isTrue(await page.locator(visible('pay')).isVisible())
      } finally {
        await context.close()
      }
    })
  }

  test('the countdown turns amber, then red, as time runs out', async ({ client, assert }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage()
    try {
      order.merge({ expirationTime: Date.now() + 150_000 })
      await order.save()
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector('#timer[data-tone="warn"]')
      order.merge({ expirationTime: Date.now() + 45_000 })
      await order.save()
      await page.reload()
      await page.waitForSelector('#timer[data-tone="danger"]')
      await screenshot(page, 'cashier-pay-last-minute-phone')
      assert.isTrue(await page.locator(visible('pay')).isVisible())
    } finally {
      await context.close()
    }
  })

  test('repeated connection failures show the connection problem, then recover', async ({
    client,
  }) => {
    const order = await newOrder(client)
    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.route('**/pay/check-status/**', (route) => route.abort('connectionrefused'))
      await page.waitForSelector('#offline:not([hidden])', { timeout: 40_000 })
      await screenshot(page, 'cashier-offline-phone')
      await page.unroute('**/pay/check-status/**')
      await page.locator('[data-retry]').click()
      await page.waitForSelector('#offline[hidden]', { state: 'attached' })
    } finally {
      await context.close()
    }
  })

  test('an unknown trade_id: a not-found page with HTTP 404', async ({ assert }) => {
    const { context, page } = await newPage()
    try {
      const response = await page.goto('/cashier/AAAAAAAAAAAAAAAAAAAAAA')
      assert.equal(response!.status(), 404)
      assert.equal(await page.locator('h1').textContent(), 'Payment not found')
      await checkState(page, assert, 'not-found')
    } finally {
      await context.close()
    }
  })
})
