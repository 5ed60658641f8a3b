import { test } from '@japa/runner'
import { createAdminUser } from '#tests/helpers/admin'
import { adminUrl } from '#admin/admin_paths'
import {
  DESKTOP,
  PHONE,
  browserGroup,
  adminPage,
  horizontalOverflow,
  screenshot,
  seriousAxeViolations,
} from '#tests/helpers/browser'
import { prepareChainsPages } from '#tests/helpers/chain_rows'

const EVM_LOWER = '0x52908400098527886e0f7030069857d2e4169ee7'
const EVM_CANONICAL = '0x52908400098527886E0F7030069857D2E4169EE7'

test.group('Console chains and wallets in Chromium', (group) => {
  browserGroup(group, prepareChainsPages)
  group.each.timeout(120_000)

  test('add a wallet: the canonical form is shown, then it is listed', async ({ assert }) => {
    const user = await createAdminUser()
    const { context, page } = await adminPage(DESKTOP, user)
    try {
      await page.goto(adminUrl('/wallets'))
      await page.locator('#new-wallet-network').selectOption('ethereum')
      await page.locator('#new-wallet-address').fill(EVM_LOWER)
      await page.getByRole('button', { name: 'Add wallet' }).last().click()
      await page.waitForURL((url) => url.search === '?network=ethereum')
      assert.include(
        await page.getByRole('status').innerText(),
        `Wallet added on ethereum: ${EVM_CANONICAL} (stored in its canonical form).`
      )
      assert.include(await page.getByRole('region', { name: 'Wallets' }).innerText(), EVM_CANONICAL)
    } finally {
      await context.close()
    }
  })

  test('the pages: no serious accessibility violation, no sideways scroll on a phone; screenshots', async ({
    assert,
  }) => {
    const user = await createAdminUser()
    for (const [viewport, suffix] of [
      [DESKTOP, 'desktop'],
      [PHONE, 'phone'],
    ] as const) {
      const { context, page } = await adminPage(viewport, user)
      try {
        for (const [path, name] of [
          ['/chains', 'chains'],
          ['/chains/tron', 'chain'],
          ['/chains/tron/tokens/USDT', 'token'],
          ['/plugins', 'plugins'],
          ['/wallets', 'wallets'],
          ['/wallets/import', 'wallets-import'],
        ]) {
          const response = await page.goto(adminUrl(path))
          assert.equal(response?.status(), 200, path)
          const violations = await seriousAxeViolations(page)
          assert.deepEqual(violations, [], `${path} at ${suffix}: ${JSON.stringify(violations)}`)
          if (suffix === 'phone')
            assert.equal(await horizontalOverflow(page), 0, `${path} scrolls sideways`)
          assert.notInclude(await page.content(), 'tron-pro-key-abcdefghijklmnop-1234')
          await screenshot(page, `console-${name}-${suffix}`)
        }
      } finally {
        await context.close()
      }
    }
  })
})
