import { test } from '@japa/runner'
import { mkdirSync } from 'node:fs'
import type { Page } from 'playwright-core'
import { adminUrl } from '#admin/admin_paths'
import {
  NARROW_AND_DESKTOP as SIZES,
  browserGroup,
  checkAdminPage,
  chineseAdminPage,
} from '#tests/helpers/browser'
import { prepareChainsPages } from '#tests/helpers/chain_rows'

/** Where ADMIN_SHOTS asks (outside the repository): full-page screenshots to look at. */
async function shot(page: Page, name: string) {
  const dir = process.env.ADMIN_SHOTS
  if (!dir) return
  mkdirSync(dir, { recursive: true })
  for (const [size, viewport] of SIZES) {
    await page.setViewportSize(viewport)
    await page.screenshot({ path: `${dir}/${name}-${size}.png`, fullPage: true })
  }
}

/**
 * The chains pages in Chinese (the admin's choice): the list with its
 * add-network form (the family's options and the busy state in Chinese),
 * a chain with the family's plugin's help, a token, the plugins; no
 * serious axe violation and no sideways scroll at 320 px and on a desktop.
 */
test.group('Console in Chinese in a browser: chains', (group) => {
  browserGroup(group, prepareChainsPages)
  group.each.timeout(180_000)

  test('the chains pages, accessible on every width', async ({ assert }) => {
    const { context, page } = await chineseAdminPage()
    try {
      await page.goto(adminUrl('/chains'))
      assert.equal(await page.getAttribute('html', 'lang'), 'zh-CN')
      assert.isTrue(await page.getByRole('heading', { name: '链', level: 1 }).isVisible())
      await page.getByRole('link', { name: '添加网络' }).click()
      const family = page.getByLabel('链类型')
      await family.selectOption('evm')
      assert.isTrue(await page.getByLabel('链 ID').isVisible())
      await page.getByLabel('网络名').fill('devnet')
      await page.getByLabel('付款人看到的名称').fill('Dev net')
      await page.getByLabel('RPC URL').fill('http://127.0.0.1:9/')
      await page.getByLabel('链 ID').fill('42161')
      await page.getByLabel('确认数').fill('2')
      await page.getByLabel('出块时间（秒）').fill('1')
      // The busy state, with the navigation held back.
      await page.evaluate(
        `document.getElementById('add-network-form').addEventListener('submit', (event) => event.preventDefault())`
      )
      await page.getByLabel('出块时间（秒）').press('Enter')
      await page.locator('#add-network-form[aria-busy="true"]').waitFor()
      assert.equal(
        (await page.locator('#add-network-form button[type="submit"]').textContent())?.trim(),
        '正在测试节点…'
      )
      assert.equal(
        (await page.locator('[data-busy-status]').textContent())?.trim(),
        '正在测试节点：最多需要 15 秒。'
      )
      await page.goto(adminUrl('/chains'))
      await checkAdminPage(page, assert, 'zh-chains', SIZES)
      await shot(page, 'zh-chains')

      await page.goto(adminUrl('/chains/tron'))
      assert.isTrue(
        await page
          .getByText(
            '由链类型放在请求头中发送（TronGrid：TRON-PRO-API-KEY）。留空即保留已存的密钥。'
          )
          .isVisible()
      )
      // A flash: a token disabled from the chain page.
      await page.getByRole('button', { name: '停用 USDT' }).click()
      await page.getByText('tron 上的 USDT 已停用：新订单不能再使用它。').waitFor()
      await checkAdminPage(page, assert, 'zh-chain-tron', SIZES)
      await shot(page, 'zh-chain-tron')

      await page.goto(adminUrl('/chains/ethereum'))
      assert.isTrue(await page.getByText('每行一个（EVM：chainId').isVisible())
      await checkAdminPage(page, assert, 'zh-chain-ethereum', SIZES)
      await shot(page, 'zh-chain-ethereum')

      await page.goto(adminUrl('/chains/tron/tokens/USDT'))
      assert.isTrue(
        await page.getByRole('heading', { name: 'TRON 上的 USDT', level: 1 }).isVisible()
      )
      await checkAdminPage(page, assert, 'zh-token', SIZES)
      await shot(page, 'zh-token')

      await page.goto(adminUrl('/plugins'))
      assert.isTrue(await page.getByRole('heading', { name: '插件', level: 1 }).isVisible())
      await checkAdminPage(page, assert, 'zh-plugins', SIZES)
      await shot(page, 'zh-plugins')
    } finally {
      await context.close()
    }
  })
})
