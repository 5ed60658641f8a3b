import walletAdmin from '#services/operators/wallet_admin'
import { test } from '@japa/runner'
import db from '@adonisjs/lucid/services/db'
import { DAY, fillRatesPage } from '#tests/helpers/rate_rows'
import { TRON_WALLET, TRON_WALLET_2 } from '#tests/helpers/merchant'
import { adminUrl } from '#admin/admin_paths'
import {
  NARROW_AND_DESKTOP as SIZES,
  browserGroup,
  checkAdminPage,
  chineseAdminPage,
} from '#tests/helpers/browser'

/** A live pair with a per-key markup, 30 days of history and paid orders; a refused pair. */
async function seedRates(now: number) {
  await fillRatesPage(now, { count: 6, prefix: 'ZB', paidAt: (index) => now - index * 3 * DAY })
  const key = await db.from('api_keys').firstOrFail()
  await db.table('rate_markups').multiInsert([
    {
      token: 'USDT',
      fiat: 'CNY',
      markup: '~1.02',
      api_key_id: 0,
      created_at: now,
      updated_at: now,
    },
    {
      token: 'USDT',
      fiat: 'CNY',
      markup: '~1.05',
      api_key_id: key.id,
      created_at: now,
      updated_at: now,
    },
  ])
}

/**
 * The API keys, wallets and rates pages in Chinese (the admin's choice):
 * no serious axe violation and no sideways scroll at 320 px and on a
 * desktop, with the longest Chinese texts (the integration guide, a chart's
 * summary, a flash message).
 */
test.group('Console in Chinese in a browser: API keys, wallets, rates', (group) => {
  browserGroup(group)

  test('the pages of the three areas, accessible on every width', async ({ assert }) => {
    await walletAdmin.add('tron', TRON_WALLET)
    await walletAdmin.add('tron', TRON_WALLET_2)
    await walletAdmin.update('tron', TRON_WALLET_2, { enabled: false, note: '冷钱包' })
    await seedRates(Date.now())
    const { context, page } = await chineseAdminPage()
    try {
      await page.goto(adminUrl('/api-keys/1000/integration'))
      assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN')
      assert.isTrue(
        await page.getByRole('heading', { name: 'pid 1000 的接入', level: 1 }).isVisible()
      )
      await checkAdminPage(page, assert, 'zh-api-keys-integration', SIZES)

      await page.goto(adminUrl('/api-keys/1000'))
      await page.getByText('停用', { exact: true }).click()
      await page.getByRole('button', { name: '停用密钥' }).click()
      await page.getByText('pid 1000 已停用').waitFor()
      await checkAdminPage(page, assert, 'zh-api-keys-disabled', SIZES)

      await page.goto(adminUrl('/wallets'))
      assert.isTrue(await page.getByRole('heading', { name: '钱包', level: 1 }).isVisible())
      await checkAdminPage(page, assert, 'zh-wallets', SIZES)

      await page.goto(adminUrl('/rates'))
      assert.isTrue(await page.getByRole('img', { name: 'USDT 兑 CNY，每日最后汇率' }).isVisible())
      await checkAdminPage(page, assert, 'zh-rates', SIZES)
    } finally {
      await context.close()
    }
  })
})
