import { test } from '@japa/runner'
import type { ServerResponse } from 'node:http'
import app from '@adonisjs/core/services/app'
import Chain from '#models/chain'
import { RpcPool } from '#chains/rpc_pool'
import { createAdminUser } from '#tests/helpers/admin'
import { adminUrl } from '#admin/admin_paths'
import { HttpStub } from '#tests/helpers/http_stub'
import { Anvil } from '#tests/helpers/evm/anvil'
import {
  DESKTOP,
  NARROW_PHONE,
  checkAdminPage,
  browserGroup,
  adminPage,
  screenshot,
} from '#tests/helpers/browser'

const ANVIL_CHAIN_ID = 31337

test.group('Console: add a network in Chromium', (group) => {
  const anvil = new Anvil()
  // An endpoint that answers only when the test lets it: the page's "testing" state is held open.
  const held = new HttpStub()
  let waiting: ServerResponse[] = []
  group.setup(async () => {
    await anvil.start(ANVIL_CHAIN_ID)
    await held.start()
    held.handler = (_request, response) => {
      waiting.push(response)
    }
    return async () => {
      for (const response of waiting) response.destroy()
      await held.stop()
      await anvil.stop()
    }
  })
  browserGroup(group, () => {
    RpcPool.reset()
    waiting = []
  })
  group.each.timeout(120_000)

  test('by keyboard: the family’s options follow the select, the test is shown while it runs, a refusal is focused at its field, then the network is added', async ({
    assert,
  }) => {
    const user = await createAdminUser()
    const { context, page } = await adminPage(DESKTOP, user)
    try {
      await page.goto(adminUrl('/chains'))
      await page.getByRole('link', { name: 'Add a network' }).click()
      assert.equal(new URL(page.url()).hash, '#add-network')

      // The chain id belongs to the EVM family only.
      const family = page.getByLabel('Family')
      const chainId = page.getByLabel('Chain id')
      await family.selectOption('tron')
      assert.isFalse(await chainId.isVisible())
      await family.selectOption('evm')
      assert.isTrue(await chainId.isVisible())
      assert.isNotNull(await chainId.getAttribute('required'), 'required once shown')

      await page.getByLabel('Network name').fill('devnet')
      await page.getByLabel('Name shown to payers').fill('Dev net')
      await page.getByLabel('RPC URL').fill(held.url)
      await chainId.fill('42161')
      await page.getByLabel('Confirmations').fill('2')
      await page.getByLabel('Block time (s)').fill('1')
      // Submitted from the keyboard. The state the page shows while the
      // endpoint is tested is read with the navigation held back (the page's
      // own submit handler has run), then the form is sent for real.
      await page.evaluate(
        `window.holdSubmit = (event) => event.preventDefault();
         document.getElementById('add-network-form').addEventListener('submit', window.holdSubmit)`
      )
      await page.getByLabel('Block time (s)').press('Enter')
      const button = page.locator('#add-network-form button[type="submit"]')
      await page.locator('#add-network-form[aria-busy="true"]').waitFor()
      assert.equal((await button.textContent())?.trim(), 'Testing the endpoint…')
      assert.isTrue(await button.isDisabled(), 'not sent twice')
      assert.include(
        await page.locator('[data-busy-status]').textContent(),
        'Testing the endpoint: this takes up to 15 s.'
      )
      await screenshot(page, 'console-add-network-testing-desktop')
      await page.evaluate(
        `const form = document.getElementById('add-network-form');
         form.removeEventListener('submit', window.holdSubmit);
         form.requestSubmit()`
      )
      // Released: the endpoint answers with an error in HTTP 200.
      await waitForRequest(() => waiting.length > 0)
      for (const response of waiting.splice(0)) {
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end('{"jsonrpc":"2.0","id":null,"error":{"code":-32002,"message":"invalid key"}}')
      }
      const rpcError = page.locator('#f-rpc_url-error')
      await rpcError.waitFor()
      await page.waitForLoadState('load')
      assert.equal(new URL(page.url()).hash, '#add-network', 'back at the form')
      assert.include(
        await rpcError.textContent(),
        'did not answer: RPC Request failed: invalid key'
      )
      assert.equal(
        await page.evaluate('document.activeElement.id'),
        'f-rpc_url',
        'the field in error has the focus'
      )
      assert.include(
        (await page.getByLabel('RPC URL').getAttribute('aria-describedby')) ?? '',
        'f-rpc_url-error'
      )

      // The node, but the wrong chain id: at the chain id's field.
      await page.getByLabel('RPC URL').fill(anvil.url)
      await page.getByRole('button', { name: 'Add network' }).click()
      await page.locator('#f-option_evm_chainId-error').waitFor()
      await page.waitForLoadState('load')
      assert.include(
        await page.locator('#f-option_evm_chainId-error').textContent(),
        'the endpoint serves chain id 31337, not 42161'
      )
      assert.equal(await page.evaluate('document.activeElement.id'), 'f-option_evm_chainId')
      assert.equal(await page.getByLabel('Network name').inputValue(), 'devnet', 'kept')
      await screenshot(page, 'console-add-network-refused-desktop')
      assert.isNull(await Chain.findBy('network', 'devnet'))

      await page.getByLabel('Chain id').fill(String(ANVIL_CHAIN_ID))
      await page.getByRole('button', { name: 'Add network' }).click()
      await page.waitForURL((url) => url.pathname === adminUrl('/chains/devnet'))
      assert.include(
        await page.getByRole('status').first().innerText(),
        'Dev net (devnet) was added: its RPC endpoint answered for it.'
      )
      const chain = await Chain.findByOrFail('network', 'devnet')
      assert.deepEqual(chain.options, { chainId: ANVIL_CHAIN_ID })
    } finally {
      await context.close()
    }
  })

  test('the form, empty and refused: no serious axe violation, no sideways scroll at 320 px; screenshots', async ({
    assert,
  }) => {
    const user = await createAdminUser()
    const { context, page } = await adminPage(NARROW_PHONE, user)
    try {
      await page.goto(adminUrl('/chains#add-network'))
      await checkAdminPage(page, assert, 'add-network', [
        ['320', NARROW_PHONE],
        ['desktop', DESKTOP],
      ])
      await page.setViewportSize(NARROW_PHONE)
      assert.equal(
        await page.getByLabel('Family').inputValue(),
        'evm',
        'the family of most networks first'
      )
      await page.getByLabel('Network name').fill('Not A Name')
      await page.getByLabel('Name shown to payers').fill('Dev net')
      await page.getByLabel('RPC URL').fill(anvil.url)
      await page.getByLabel('Chain id').fill('1')
      await page.getByLabel('Confirmations').fill('2')
      await page.getByLabel('Block time (s)').fill('1')
      await page.getByRole('button', { name: 'Add network' }).click()
      await page.waitForURL((url) => url.hash === '#add-network')
      await page.locator('#f-network-error').waitFor()
      // The card alone as well: a full page at 320 px is long to look at.
      await page.locator('#add-network').screenshot({
        path: app.makePath('tmp', 'screenshots', 'console-add-network-card-refused-320.png'),
      })
      await checkAdminPage(page, assert, 'add-network-refused', [
        ['320', NARROW_PHONE],
        ['desktop', DESKTOP],
      ])
    } finally {
      await context.close()
    }
  })
})

/** Polls `ready` (the test's own state, not the page's) for up to 10 s. */
async function waitForRequest(ready: () => boolean) {
  const deadline = Date.now() + 10_000
  while (!ready()) {
    if (Date.now() > deadline) throw new Error('the endpoint was never asked')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
