/*
 * The confirming state of the cashier on a real EVM node (anvil).
 *
 * Needs GET /pay/payment-progress/{trade_id} and the scanners' sightings
 * (built on another branch; contract in the issue): until both are merged
 * this file fails, by design — it stubs nothing.
 */
import { test } from '@japa/runner'
import Order from '#models/order'
import chainScanner from '#services/chain_scanner'
import { resetDatabase } from '#tests/helpers/database'
import { createOrder, orderParams } from '#tests/helpers/merchant'
import { Anvil } from '#tests/helpers/evm/anvil'
import { configureEthereum, deployTokens, type EvmFixture } from '#tests/helpers/evm/evm_setup'
import {
  closeBrowser,
  horizontalOverflow,
  newPage,
  screenshot,
  seriousAxeViolations,
  DESKTOP,
  NARROW_PHONE,
  PHONE,
} from '#tests/helpers/browser'

const visible = (view: string) => `[data-view="${view}"]:not([hidden])`

async function scanEthereum() {
  const [report] = await chainScanner.scan({ network: 'ethereum' })
  if (report.detail.startsWith('scan failed')) throw new Error(report.detail)
}

test.group('Cashier in Chromium: payment seen, confirming (anvil)', (group) => {
  const anvil = new Anvil()
  let tokens: { usdt: `0x${string}`; usdc: `0x${string}` }
  let fixture: EvmFixture

  group.setup(async () => {
    await anvil.start()
    tokens = await deployTokens(anvil)
    return async () => {
      await closeBrowser()
      await anvil.stop()
    }
  })
  group.each.setup(async () => {
    await resetDatabase()
    fixture = await configureEthereum(tokens, [anvil.url], 3)
  })

  test('a sighted transfer shows "payment seen, n of 3 confirmations", then success with the transaction', async ({
    client,
    assert,
  }) => {
    const response = await createOrder(
      client,
      orderParams({ network: 'ethereum', token: 'usdt', amount: 100 })
    )
    const order = await Order.findByOrFail('trade_id', response.body().data.trade_id)
    await scanEthereum() // cursor before the payment

    const { context, page } = await newPage()
    try {
      await page.goto(`/cashier/${order.tradeId}`)
      await page.waitForSelector(visible('pay'))

      const hash = await anvil.payToken(fixture.usdt, 6, fixture.wallet, '13.80')
      await scanEthereum() // 1 confirmation: seen, not paid
      assert.equal((await Order.findOrFail(order.id)).status, 1)
      await page.waitForSelector(visible('confirming'), { timeout: 15_000 })
      assert.match(
        (await page.locator('[data-confirming-text]').textContent())!,
        /^Payment seen, [12] of 3 confirmations$/
      )

      for (const [size, viewport] of [
        ['phone', PHONE],
        ['320', NARROW_PHONE],
        ['desktop', DESKTOP],
      ] as const) {
        await page.setViewportSize(viewport)
        assert.equal(await horizontalOverflow(page), 0)
        await screenshot(page, `cashier-confirming-${size}`)
      }
      await page.setViewportSize(PHONE)
      assert.deepEqual(await seriousAxeViolations(page), [])

      await anvil.mine(1)
      await scanEthereum()
      if ((await Order.findOrFail(order.id)).status !== 2) {
        await page
          .locator('[data-confirming-text]')
          .filter({ hasText: /^Payment seen, 2 of 3 confirmations$/ })
          .waitFor({ timeout: 15_000 })
        await anvil.mine(1)
        await scanEthereum()
      }
      assert.equal((await Order.findOrFail(order.id)).status, 2)

      await page.waitForSelector(visible('paid'), { timeout: 15_000 })
      await page.waitForSelector('#paid-tx:not([hidden])', { timeout: 10_000 })
      assert.equal(
        (await page.locator('#paid-tx-ref').textContent())!.toLowerCase(),
        hash.toLowerCase()
      )
      const explorer = await page.locator('#paid-tx-link').getAttribute('href')
      if (!(await page.locator('#paid-tx-link').isHidden()))
        assert.include(explorer!.toLowerCase(), hash.toLowerCase())
      await screenshot(page, 'cashier-paid-with-transaction-phone')
    } finally {
      await context.close()
    }
  })
})
