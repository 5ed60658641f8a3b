import { test } from '@japa/runner'
import { createAdminUser } from '#tests/helpers/admin'
import { DAY, fillRatesPage, insertRateAnswer } from '#tests/helpers/rate_rows'
import { adminUrl } from '#admin/admin_paths'
import {
  DESKTOP,
  NARROW_PHONE,
  checkAdminPage,
  browserGroup,
  adminSignIn,
  newPage,
  screenshot,
} from '#tests/helpers/browser'

/** Two live pairs as the workers leave them (one refused), their sources' answers, 30 days of history, paid orders. */
async function seedRates(now: number) {
  await fillRatesPage(now, {
    count: 12,
    prefix: 'BR',
    paidAt: (index) => now - (index % 9) * 2 * DAY,
  })
  await insertRateAnswer({
    source: 'binance',
    price: '7.2',
    quote: 'USDT',
    fetchedAt: now - 60_000,
  })
  await insertRateAnswer({
    source: 'coingecko',
    price: null,
    quote: '',
    fetchedAt: now - 600_000,
    error: 'HTTP 429: a very long rate limit message from the source that goes on and on',
  })
}

test.group('Console in a browser: rates', (group) => {
  browserGroup(group)

  test('the rates page: empty and filled, accessible on every width; a markup set from it', async ({
    assert,
  }) => {
    const admin = await createAdminUser()
    const { page } = await newPage(DESKTOP)
    await adminSignIn(page, admin)
    await page.goto(adminUrl('/rates'))
    assert.isTrue(await page.getByRole('heading', { name: 'Rates', level: 1 }).isVisible())
    assert.isTrue(await page.getByText('No live rate source is configured').isVisible())
    await checkAdminPage(page, assert, 'rates-empty')

    await seedRates(Date.now())
    await page.goto(adminUrl('/rates'))
    assert.isTrue(
      await page.getByRole('img', { name: 'USDT in CNY, last rate of each day' }).isVisible()
    )
    await checkAdminPage(page, assert, 'rates-filled')

    await page.setViewportSize(NARROW_PHONE)
    const form = page.locator('#markup-USDT_CNY')
    await form.getByLabel('Markup on USDT/CNY').fill('~9')
    await form.getByRole('button', { name: 'Set markup of USDT/CNY' }).click()
    assert.include(
      await page.locator('#markup-USDT_CNY .field-error').textContent(),
      'more than half'
    )
    await screenshot(page, 'console-rates-refused-320')
    await page.locator('#markup-USDT_CNY').getByLabel('Markup on USDT/CNY').fill('~1.02')
    await page
      .locator('#markup-USDT_CNY')
      .getByRole('button', { name: 'Set markup of USDT/CNY' })
      .click()
    assert.include(await page.locator('.flash').first().textContent(), 'set to ~1.02')
    assert.isTrue(await page.getByText('7.344').first().isVisible())
    await screenshot(page, 'console-rates-markup-320')
  })
})
