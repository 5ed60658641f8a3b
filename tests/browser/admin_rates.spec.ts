import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { resetDatabase } from '#tests/helpers/database'
import { createAdminUser } from '#tests/helpers/admin'
import { insertOrders, type OrderRow } from '#tests/helpers/order_rows'
import { adminUrl } from '#admin/admin_paths'
import {
  DESKTOP,
  NARROW_PHONE,
  checkAdminPage,
  closeBrowser,
  adminSignIn,
  newPage,
  screenshot,
} from '#tests/helpers/browser'

const DAY = 86_400_000

/** Two live pairs as the workers leave them (one refused), 30 days of history, paid orders. */
async function seedRates(now: number) {
  await db.table('rate_current').multiInsert([
    {
      token: 'USDT',
      fiat: 'CNY',
      rate: '7.2',
      ok: true,
      reason: '',
      sources: JSON.stringify({
        used: ['binance', 'okx'],
        dropped: [{ source: 'kraken', price: '7.9', deviation_percent: '9.72' }],
        stale: [],
        failed: ['coingecko'],
      }),
      computed_at: now - 40_000,
    },
    {
      token: 'TRX',
      fiat: 'USD',
      rate: null,
      ok: false,
      reason: 'only 1 fresh source agrees, 2 needed',
      sources: JSON.stringify({ used: [], dropped: [], stale: ['binance'], failed: [] }),
      computed_at: now - 40_000,
    },
  ])
  await db.table('rate_answers').multiInsert([
    {
      source: 'binance',
      token: 'USDT',
      fiat: 'CNY',
      price: '7.2',
      quote: 'USDT',
      fetched_at: now - 60_000,
      error: '',
    },
    {
      source: 'coingecko',
      token: 'USDT',
      fiat: 'CNY',
      price: null,
      quote: '',
      fetched_at: now - 600_000,
      error: 'HTTP 429: a very long rate limit message from the source that goes on and on',
    },
  ])
  const history = []
  for (let day = 29; day >= 0; day--)
    history.push({
      token: 'USDT',
      fiat: 'CNY',
      rate: String(7.1 + (day % 5) * 0.03),
      at: now - day * DAY,
    })
  await db.table('rate_history').multiInsert(history)
  await insertOrders(12, (index) => {
    const row: Partial<OrderRow> & { paid_at: number; amount: string } = {
      trade_id: `BR${index}`,
      status: 2,
      token: 'USDT',
      paid_at: now - (index % 9) * 2 * DAY,
      amount: String(50 + index * 25),
    }
    return row
  })
}

test.group('Console in a browser: rates', (group) => {
  group.setup(async () => {
    return async () => {
      await closeBrowser()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
  })

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
